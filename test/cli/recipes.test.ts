import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import {
  invoiceSyncHandlers,
  stripeInvoiceApi,
} from "../../examples/recipes/fetch-current-state.ts";
import { creditPayment } from "../../examples/recipes/payment-credit.ts";
import { type Carrier, shipmentHandlers } from "../../examples/recipes/shipment.ts";
import { subscriptionHandlers } from "../../examples/recipes/subscription.ts";
import { type Mailer, welcomeEmailHandlers } from "../../examples/recipes/welcome-email.ts";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import type { Handler } from "../../src/index.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { spawnCommand } from "../helpers/gateway-process.ts";
import { secrets, standardRequest, stripeRequest, testSources } from "../helpers/signers.ts";
import { repoRoot, tempDir } from "../helpers/temp.ts";

// Every recipe of docs/recipes.md, run end to end: examples/recipes/*.ts handlers in a real
// in-process gateway over HTTP, requests signed by the providers' official packages, the handlers'
// own rows read back from the SQLite file, and effects counted at the fakes they call.

const token = testAdminToken;
const cleanups: Array<() => void | Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface Harness {
  readonly gateway: Gateway;
  post(source: string, request: { body: string; headers: Record<string, string> }): Promise<any>;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  rows<T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[];
  /** Resolves when the given worker (default: the gateway's) has nothing in flight or due. */
  idle(worker?: { idle(): Promise<void> }): Promise<void>;
}

async function harness(config: Record<string, unknown>): Promise<Harness> {
  const tmp = tempDir();
  const path = join(tmp.dir, "hookinbox.db");
  const gateway = await startGateway(
    {
      store: `sqlite:${path}`,
      worker: { lease: "300ms", pollInterval: "50ms" },
      ...config,
    },
    { env: {}, port: 0, adminToken: token },
  );
  cleanups.push(async () => {
    await gateway.close();
    tmp.cleanup();
  });
  return {
    gateway,
    async post(source, request) {
      const response = await fetch(`${gateway.url}/webhooks/${source}`, {
        method: "POST",
        headers: request.headers,
        body: request.body,
      });
      expect(response.status).toBe(200);
      return response.json();
    },
    async api(method, path, body) {
      const response = await fetch(`${gateway.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, json: await response.json() };
    },
    rows(sql, ...params) {
      const db = new Database(path, { readonly: true });
      try {
        return db.prepare(sql).all(...params) as never[];
      } finally {
        db.close();
      }
    },
    idle: (worker = gateway.worker!) => worker.idle(),
  };
}

const payment = (id: string, orderId: string, amount: number, customer = "cus_1") =>
  stripeRequest(id, {
    type: "payment_intent.succeeded",
    extra: {
      data: {
        object: {
          id: `pi_${orderId}`,
          amount_received: amount,
          currency: "eur",
          customer,
          metadata: { order_id: orderId },
        },
      },
    },
  });

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("docs/recipes.md", () => {
  it("shows each recipe's code exactly as examples/recipes/*.ts, which the tests below run", () => {
    const docs = readFileSync(join(repoRoot, "docs/recipes.md"), "utf8");
    for (const name of [
      "payment-credit",
      "welcome-email",
      "shipment",
      "subscription",
      "fetch-current-state",
    ]) {
      const source = readFileSync(join(repoRoot, `examples/recipes/${name}.ts`), "utf8");
      const code = source.slice(source.indexOf("import ")).trimEnd();
      expect(docs, `docs/recipes.md is out of date for ${name}.ts`).toContain(
        `\`\`\`ts\n${code}\n\`\`\``,
      );
    }
  });
});

describe("recipe (a): a payment credited under a unique key per order", () => {
  it("credits once however often and however concurrently the payment is delivered", async () => {
    let runs = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    const counted: Handler = async (event, ctx) => {
      runs++;
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      try {
        await sleep(20);
        await creditPayment(event as never, ctx);
      } finally {
        inFlight--;
      }
    };
    const h = await harness({
      // No ordering key here, so that deliveries about one payment really run side by side: the
      // unique key alone must keep the credit single.
      sources: {
        stripe: { ...testSources.stripe, identity: { orderingKey: "header:x-no-ordering-key" } },
      },
      handlers: { "stripe:payment_intent.succeeded": counted },
    });

    // The same event 5 times in parallel: one event (ingest deduplicates on Stripe's id).
    const same = payment("evt_pay_1", "ord_1", 2500);
    const answers = await Promise.all(Array.from({ length: 5 }, () => h.post("stripe", same)));
    const eventId = answers[0].eventId as string;
    expect(answers.filter((a) => a.duplicate)).toHaveLength(4);
    // 5 more events about the same order under new ids, in parallel: 5 events, 5 deliveries.
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        h.post("stripe", payment(`evt_pay_1_resent_${i}`, "ord_1", 2500)),
      ),
    );
    // And 5 operator replays of the first event, in parallel.
    const replays = await Promise.all(
      Array.from({ length: 5 }, () => h.api("POST", `/api/events/${eventId}/replay`)),
    );
    expect(replays.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    await h.idle();

    expect(runs).toBe(11);
    expect(maxInFlight).toBeGreaterThan(1);
    expect(h.rows("SELECT order_id, account_id, amount, event_id FROM credits")).toEqual([
      { order_id: "ord_1", account_id: "cus_1", amount: 2500, event_id: eventId },
    ]);
    expect(h.rows("SELECT account_id, balance FROM balances")).toEqual([
      { account_id: "cus_1", balance: 2500 },
    ]);
    const done = await h.api("GET", "/api/deliveries?status=done&limit=500");
    expect(done.json.items).toHaveLength(11);

    // Another order adds to the balance, once, even delivered twice in a row.
    await h.post("stripe", payment("evt_pay_2", "ord_2", 1000));
    await h.post("stripe", payment("evt_pay_2", "ord_2", 1000));
    await h.idle();
    expect(h.rows("SELECT count(*) AS n FROM credits")).toEqual([{ n: 2 }]);
    expect(h.rows("SELECT balance FROM balances WHERE account_id = 'cus_1'")).toEqual([
      { balance: 3500 },
    ]);
    expect(runs).toBe(12);
  });

  it("runs as a config file: `hookinbox start --config examples/recipes/payment-credit.ts`", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const gateway = await spawnCommand(
      tmp.dir,
      ["start", "--config", join(repoRoot, "examples/recipes/payment-credit.ts"), "--port", "0"],
      { STRIPE_WEBHOOK_SECRET: secrets.stripe },
    );
    for (let i = 0; i < 3; i++) {
      const request = payment(`evt_file_${i}`, "ord_file", 700);
      const response = await fetch(`${gateway.url}/webhooks/stripe`, {
        method: "POST",
        ...request,
      });
      expect(response.status).toBe(200);
    }
    const path = join(tmp.dir, ".hookinbox/hookinbox.db");
    const credits = await waitFor("three deliveries done", () => {
      const db = new Database(path, { readonly: true });
      try {
        const done = db
          .prepare("SELECT count(*) AS n FROM deliveries WHERE status IN ('done', 'stale')")
          .get() as { n: number };
        return done.n === 3 ? db.prepare("SELECT order_id, amount FROM credits").all() : undefined;
      } finally {
        db.close();
      }
    });
    expect(credits).toEqual([{ order_id: "ord_file", amount: 700 }]);
    gateway.child.kill("SIGTERM");
    expect((await gateway.exited()).code).toBe(0);
  });
});

/** A user.created event from Clerk (Standard Webhooks, signed by the `standardwebhooks` package). */
const userCreated = (messageId: string, userId: string, email: string) =>
  standardRequest(
    messageId,
    JSON.stringify({
      type: "user.created",
      data: { id: userId, first_name: "Ada", email_addresses: [{ email_address: email }] },
    }),
  );

describe("recipe (b): an email behind ctx.effect with onStale: reclaim", () => {
  it("sends once across duplicates and replays; after a stalled worker it sends again rather than never", async () => {
    const sent: Array<{ to: string; idempotencyKey: string }> = [];
    let stallNext = false;
    const mailer: Mailer = {
      send(message) {
        sent.push({ to: message.to, idempotencyKey: message.idempotencyKey });
        if (stallNext) {
          stallNext = false;
          return new Promise(() => {}); // the worker stalls here: the email may or may not leave
        }
        return Promise.resolve({ messageId: `msg_${sent.length}` });
      },
    };
    const h = await harness({
      sources: { clerk: testSources.standard },
      handlers: welcomeEmailHandlers(mailer, { staleAfter: "200ms" }),
    });
    const sentTo = (to: string) => sent.filter((s) => s.to === to);

    // Twice in a row, then two replays: one email.
    const first = await h.post("clerk", userCreated("msg_user_1", "user_1", "ada@example.com"));
    await h.post("clerk", userCreated("msg_user_1", "user_1", "ada@example.com"));
    await h.idle();
    await h.api("POST", `/api/events/${first.eventId}/replay`);
    await h.api("POST", `/api/events/${first.eventId}/replay`);
    await h.idle();
    expect(sentTo("ada@example.com")).toHaveLength(1);
    expect((await h.api("GET", `/api/effects?eventId=${first.eventId}`)).json.items).toEqual([
      expect.objectContaining({
        name: "welcome-email",
        status: "done",
        onStale: "reclaim",
        staleAfterMs: 200,
        claims: 1,
      }),
    ]);

    // The worker stalls inside the send and goes away; its lease expires; another worker
    // finds the claim stale and, under reclaim, sends again.
    stallNext = true;
    const second = await h.post("clerk", userCreated("msg_user_2", "user_2", "bob@example.com"));
    await waitFor("the stalled send", () =>
      sentTo("bob@example.com").length === 1 ? true : undefined,
    );
    await h.gateway.worker!.stop(10);
    await sleep(350);
    const rescuer = h.gateway.inbox.startWorker();
    await waitFor("the reclaimed send", async () => {
      const { json } = await h.api("GET", `/api/events/${second.eventId}`);
      return json.status === "done" ? true : undefined;
    });
    await h.idle(rescuer);
    expect(sentTo("bob@example.com")).toHaveLength(2);
    const [a, b] = sentTo("bob@example.com");
    expect(a!.idempotencyKey).toBe(b!.idempotencyKey); // a mail API with idempotency drops the repeat
    expect((await h.api("GET", `/api/effects?eventId=${second.eventId}`)).json.items).toEqual([
      expect.objectContaining({ status: "done", onStale: "reclaim", claims: 2 }),
    ]);
    const detail = (await h.api("GET", `/api/events/${second.eventId}`)).json;
    expect(detail.deliveries[0].attemptLog.map((x: { outcome: string }) => x.outcome)).toEqual([
      "lease-expired",
      "success",
    ]);

    // Done now: a replay does not send a third time.
    await h.api("POST", `/api/events/${second.eventId}/replay`);
    await h.idle(rescuer);
    expect(sentTo("bob@example.com")).toHaveLength(2);
  });
});

const checkout = (id: string, orderId: string) =>
  stripeRequest(id, {
    type: "checkout.session.completed",
    extra: {
      data: {
        object: {
          id: `cs_${orderId}`,
          metadata: { order_id: orderId },
          shipping_details: { name: "Ada", address: { city: "Paris" } },
        },
      },
    },
  });

describe("recipe (c): a shipment behind onStale: hold with ctx.idempotencyKey", () => {
  it("never re-ships on a guess: a stale claim is held for a human, released, and the carrier's key dedupes", async () => {
    // A carrier that deduplicates on the idempotency key, like real carrier APIs do.
    const shipmentsByKey = new Map<string, string>();
    const calls: Array<{ orderId: string; idempotencyKey: string }> = [];
    let loseNextAnswer = false;
    const carrier: Carrier = {
      createShipment({ orderId, idempotencyKey }) {
        calls.push({ orderId, idempotencyKey });
        if (!shipmentsByKey.has(idempotencyKey)) {
          shipmentsByKey.set(idempotencyKey, `shp_${shipmentsByKey.size + 1}`);
        }
        if (loseNextAnswer) {
          loseNextAnswer = false;
          return new Promise(() => {}); // shipped, but the worker never hears back
        }
        return Promise.resolve({ shipmentId: shipmentsByKey.get(idempotencyKey)! });
      },
    };
    const heldAlerts: unknown[] = [];
    const h = await harness({
      sources: { stripe: testSources.stripe },
      handlers: shipmentHandlers(carrier, { staleAfter: "200ms" }),
      alerts: { onEffectHeld: (alert: unknown) => heldAlerts.push(alert) },
    });
    const callsFor = (orderId: string) => calls.filter((c) => c.orderId === orderId);

    // Delivered twice and replayed: one carrier call, one shipment row.
    const first = await h.post("stripe", checkout("evt_ship_1", "ord_1"));
    await h.post("stripe", checkout("evt_ship_1", "ord_1"));
    await h.idle();
    await h.api("POST", `/api/events/${first.eventId}/replay`);
    await h.idle();
    expect(callsFor("ord_1")).toHaveLength(1);
    expect(h.rows("SELECT order_id, shipment_id FROM shipments")).toEqual([
      { order_id: "ord_1", shipment_id: "shp_1" },
    ]);

    // The carrier ships ord_2 but the answer is lost and the worker goes away.
    loseNextAnswer = true;
    const second = await h.post("stripe", checkout("evt_ship_2", "ord_2"));
    await waitFor("the carrier call", () => (callsFor("ord_2").length === 1 ? true : undefined));
    await h.gateway.worker!.stop(10);
    await sleep(350);
    const rescuer = h.gateway.inbox.startWorker();
    const dead = await waitFor("the held effect", async () => {
      const { json } = await h.api("GET", `/api/events/${second.eventId}`);
      return json.status === "dead" ? json : undefined;
    });
    // hold: the carrier was not called again; a human was alerted, once.
    expect(callsFor("ord_2")).toHaveLength(1);
    expect(dead.deliveries[0].lastError).toMatch(/^EffectHeldError: effect "create-shipment"/);
    expect(heldAlerts).toEqual([
      expect.objectContaining({ name: "create-shipment", eventId: second.eventId }),
    ]);
    const stuck = (await h.api("GET", "/api/stuck")).json;
    expect(stuck.heldEffects).toEqual([
      expect.objectContaining({ name: "create-shipment", status: "held", onStale: "hold" }),
    ]);

    // The human releases it and retries the delivery: the same key goes to the carrier, which
    // answers with the shipment it already made.
    const effectId = stuck.heldEffects[0].id;
    expect(
      (await h.api("POST", `/api/effects/${effectId}/resolve`, { resolution: "release" })).status,
    ).toBe(200);
    expect((await h.api("POST", `/api/deliveries/${dead.deliveries[0].id}/retry`)).status).toBe(
      200,
    );
    await waitFor("the retried shipment", async () => {
      const { json } = await h.api("GET", `/api/events/${second.eventId}`);
      return json.status === "done" ? true : undefined;
    });
    await h.idle(rescuer);
    const [lost, again] = callsFor("ord_2");
    expect(again!.idempotencyKey).toBe(lost!.idempotencyKey);
    expect(shipmentsByKey.size).toBe(2); // ord_1 and ord_2: nothing shipped twice
    expect(h.rows("SELECT order_id, shipment_id FROM shipments ORDER BY order_id")).toEqual([
      { order_id: "ord_1", shipment_id: "shp_1" },
      { order_id: "ord_2", shipment_id: "shp_2" },
    ]);
    expect(heldAlerts).toHaveLength(1);
  });
});

const now = Math.floor(Date.now() / 1000);
const subscriptionEvent = (
  id: string,
  type: string,
  status: string,
  secondsAgo: number,
  subscription = "sub_1",
) =>
  stripeRequest(id, {
    type,
    timestamp: now - secondsAgo,
    extra: { data: { object: { id: subscription, customer: "cus_1", status } } },
  });

describe("recipe (d): a subscription guarded by version and a state machine", () => {
  it("applies the newest state, marks older events stale, and dead-letters an illegal transition", async () => {
    const h = await harness({
      sources: { stripe: testSources.stripe },
      handlers: subscriptionHandlers,
    });
    const row = () => h.rows("SELECT id, status, version FROM subscriptions WHERE id = 'sub_1'");
    const deliveryOf = async (eventId: string) =>
      (await h.api("GET", `/api/events/${eventId}`)).json.deliveries as Array<{
        status: string;
        lastError: string | null;
        isReplay: boolean;
      }>;

    // The newer event (active) arrives first, then the older one (incomplete): it is stale.
    const active = await h.post(
      "stripe",
      subscriptionEvent("evt_sub_2", "customer.subscription.updated", "active", 180),
    );
    await h.idle();
    const created = await h.post(
      "stripe",
      subscriptionEvent("evt_sub_1", "customer.subscription.created", "incomplete", 240),
    );
    await h.idle();
    expect(row()).toEqual([{ id: "sub_1", status: "active", version: now - 180 }]);
    expect((await deliveryOf(active.eventId)).map((d) => d.status)).toEqual(["done"]);
    expect((await deliveryOf(created.eventId)).map((d) => d.status)).toEqual(["stale"]);

    // A replay of the older event is stale too.
    await h.api("POST", `/api/events/${created.eventId}/replay`);
    await h.idle();
    expect((await deliveryOf(created.eventId)).map((d) => [d.status, d.isReplay])).toEqual([
      ["stale", false],
      ["stale", true],
    ]);

    // Cancellation applies; a later "active" is an illegal transition: dead-lettered, not applied.
    await h.post(
      "stripe",
      subscriptionEvent("evt_sub_3", "customer.subscription.deleted", "canceled", 120),
    );
    await h.idle();
    const revived = await h.post(
      "stripe",
      subscriptionEvent("evt_sub_4", "customer.subscription.updated", "active", 60),
    );
    await h.idle();
    expect(row()).toEqual([{ id: "sub_1", status: "canceled", version: now - 120 }]);
    expect(await deliveryOf(revived.eventId)).toEqual([
      expect.objectContaining({
        status: "dead",
        lastError: "IllegalTransitionError: illegal transition canceled → active",
      }),
    ]);

    // Another subscription is its own ordering key: unaffected.
    await h.post(
      "stripe",
      subscriptionEvent("evt_sub_b", "customer.subscription.created", "trialing", 30, "sub_2"),
    );
    await h.idle();
    expect(h.rows("SELECT id, status FROM subscriptions ORDER BY id")).toEqual([
      { id: "sub_1", status: "canceled" },
      { id: "sub_2", status: "trialing" },
    ]);
  });
});

describe("recipe (e): the webhook as a notification, the current state fetched from the provider", () => {
  it("writes what the provider says now, whatever order and snapshot the events carry", async () => {
    // A fake Stripe API on loopback: GET /v1/invoices/:id with a bearer key.
    const invoices = new Map([
      ["in_1", { id: "in_1", status: "paid", amount_due: 5000, amount_paid: 5000 }],
    ]);
    let fetches = 0;
    const server: Server = createServer((req, res) => {
      const match = /^\/v1\/invoices\/([^/]+)$/.exec(req.url ?? "");
      const invoice = match ? invoices.get(decodeURIComponent(match[1]!)) : undefined;
      if (req.headers.authorization !== "Bearer sk_test_recipe") {
        res.writeHead(401).end();
        return;
      }
      fetches++;
      res.writeHead(invoice ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify(invoice ?? { error: "no such invoice" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const h = await harness({
      sources: { stripe: testSources.stripe },
      handlers: invoiceSyncHandlers(stripeInvoiceApi("sk_test_recipe", api)),
    });
    const invoiceEvent = (id: string, type: string, snapshot: string, secondsAgo: number) =>
      stripeRequest(id, {
        type,
        timestamp: now - secondsAgo,
        extra: { data: { object: { id: "in_1", status: snapshot, amount_due: 5000 } } },
      });
    const row = () => h.rows("SELECT id, status, amount_paid FROM invoices");

    // Out of order: invoice.paid first, then the older invoice.finalized whose snapshot says
    // "open". Both fetch; the row says what the provider says: paid.
    await h.post("stripe", invoiceEvent("evt_inv_paid", "invoice.paid", "paid", 60));
    await h.idle();
    const finalized = await h.post(
      "stripe",
      invoiceEvent("evt_inv_final", "invoice.finalized", "open", 120),
    );
    await h.idle();
    expect(row()).toEqual([{ id: "in_1", status: "paid", amount_paid: 5000 }]);
    expect(fetches).toBe(2);
    expect(
      ((await h.api("GET", `/api/events/${finalized.eventId}`)).json.deliveries as any[]).map(
        (d) => d.status,
      ),
    ).toEqual(["done"]); // stale: "deliver": an older notification still refreshes

    // The invoice changes at the provider; any notification (here a replay of the old one)
    // brings the row to the current state.
    invoices.set("in_1", { id: "in_1", status: "void", amount_due: 0, amount_paid: 5000 });
    await h.api("POST", `/api/events/${finalized.eventId}/replay`);
    await h.idle();
    expect(row()).toEqual([{ id: "in_1", status: "void", amount_paid: 5000 }]);
    expect(fetches).toBe(3);
  });
});
