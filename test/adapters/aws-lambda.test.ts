// hookinbox/aws-lambda: events as a function URL and an HTTP API (payload 2.0) deliver them,
// signed by the `stripe` package, answered through the fetch adapter and stored byte for byte,
// on every store; the event shapes it refuses (REST API v1, ALB, anything else) answer 500.
import Stripe from "stripe";
import { afterEach, describe, expect, it, vi } from "vitest";
import { lambdaHandler, lambdaScheduledHandler } from "../../src/adapters/aws-lambda.ts";
import { drainBudget } from "../../src/adapters/aws-lambda-event.ts";
import type { Handler } from "../../src/handlers/types.ts";
import { createInbox, type Inbox } from "../../src/inbox.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import {
  albEvent,
  functionUrlEvent,
  httpApiEvent,
  type LambdaRequest,
  restApiEvent,
} from "../helpers/lambda-events.ts";
import { processingInbox, until } from "../helpers/processing.ts";
import { secrets, stripeRequest, testSources } from "../helpers/signers.ts";
import {
  type StoreVariant,
  storeFactories,
  storeVariants,
  type TestStore,
} from "../helpers/stores.ts";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const stripe = new Stripe("sk_test_hookinbox");

/**
 * A Stripe event whose bytes a re-serialisation would change: pretty-printed, non-ASCII text,
 * a `\u00e9` escape, a precise float and a key order JSON.parse/stringify keeps but spacing it
 * drops. Signed over these exact bytes.
 */
function fragileStripeRequest(id: string): { bytes: Buffer; headers: Record<string, string> } {
  const text = `{\n  "id": "${id}",\n  "object": "event",\n  "type": "customer.updated",\n  "created": ${Math.floor(Date.now() / 1000)},\n  "data": { "object": { "id": "cus_1", "name": "Zoë Ærøskøbing — 東京 €", "note": "caf\\u00e9", "balance": 1.10 } }\n}\n`;
  const bytes = Buffer.from(text, "utf8");
  const signature = stripe.webhooks.generateTestHeaderString({
    payload: text,
    secret: secrets.stripe,
  });
  return {
    bytes,
    headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": signature },
  };
}

async function setup(store: TestStore) {
  let created = 0;
  let inbox: Inbox | undefined;
  const open = () => {
    created++;
    inbox = createInbox(
      { store: store.url, sources: testSources, http: { bodyLimit: "4kb" } },
      { env: {}, adminToken: testAdminToken },
    );
    cleanups.push(() => inbox?.close());
    return inbox;
  };
  return { open, created: () => created };
}

const json = (result: { body: string }) => JSON.parse(result.body);

/** How many rejections the store recorded (written after the answer: polled for). */
const rejections = (store: TestStore, expected: number) =>
  until(
    async () =>
      (await store.count("SELECT count(*) AS n FROM receipts WHERE event_id IS NULL")) === expected,
    10_000,
    `${expected} rejections`,
  );

describe.each(storeFactories())("hookinbox/aws-lambda lambdaHandler ($name)", ({ open }) => {
  async function env(options: Parameters<typeof lambdaHandler>[1] = {}) {
    const store = await open();
    cleanups.push(() => store.cleanup());
    const inbox = await setup(store);
    return { store, inbox, handler: lambdaHandler(inbox.open, options) };
  }

  it("stores a function URL delivery once and answers a duplicate as one", async () => {
    const { store, inbox, handler } = await env();
    const signed = stripeRequest("evt_lambda_url");
    const event = functionUrlEvent({ path: "/webhooks/stripe", ...signed });
    const first = await handler(event);
    const second = await handler(event);

    expect(first).toMatchObject({
      statusCode: 200,
      isBase64Encoded: false,
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(json(first)).toMatchObject({ duplicate: false });
    expect(second.statusCode).toBe(200);
    expect(json(second)).toEqual({ ...json(first), duplicate: true });
    expect(inbox.created()).toBe(1);
    expect(await store.rows("SELECT source, dedup_key, type FROM events")).toEqual([
      { source: "stripe", dedup_key: "evt_lambda_url", type: "invoice.paid" },
    ]);
    expect(await store.count("SELECT count(*) AS n FROM receipts")).toBe(2);
    expect(
      await store.rows<{ remote_address: string }>("SELECT DISTINCT remote_address FROM receipts"),
    ).toEqual([{ remote_address: "54.187.174.169" }]);
  });

  it("takes the source from an HTTP API's path parameter and decodes a base64 body exactly", async () => {
    const { store, handler } = await env();
    const signed = fragileStripeRequest("evt_lambda_b64");
    const event = httpApiEvent({
      source: "stripe",
      path: "/webhooks/stripe",
      headers: signed.headers,
      body: signed.bytes,
    });
    expect(event.rawPath).toBe("/prod/webhooks/stripe");
    expect(event.isBase64Encoded).toBe(true);
    const result = await handler(event);

    expect(result.statusCode).toBe(200);
    expect(json(result)).toMatchObject({ duplicate: false });
    const [stored] = await store.rows<{ body: Buffer }>("SELECT body FROM events");
    expect(Buffer.compare(stored!.body, signed.bytes)).toBe(0);
  });

  it("keeps non-ASCII text bodies byte-exact, so their signature verifies", async () => {
    const { store, handler } = await env();
    const signed = fragileStripeRequest("evt_lambda_utf8");
    const text = signed.bytes.toString("utf8");
    // What a host that parses and re-serialises JSON would deliver: a different byte string.
    expect(Buffer.from(JSON.stringify(JSON.parse(text))).equals(signed.bytes)).toBe(false);
    const result = await handler(
      functionUrlEvent({ path: "/webhooks/stripe", headers: signed.headers, body: text }),
    );

    expect(result.statusCode).toBe(200);
    const [stored] = await store.rows<{ body: Buffer }>("SELECT body FROM events");
    expect(Buffer.compare(stored!.body, signed.bytes)).toBe(0);
    expect(await store.count("SELECT count(*) AS n FROM events")).toBe(1);
  });

  it("uses options.source over the path, and answers a forgery 401", async () => {
    const { store, handler } = await env({ source: "stripe" });
    const signed = stripeRequest("evt_lambda_fixed");
    const ok = await handler(functionUrlEvent({ path: "/", ...signed }));
    const forged = await handler(
      functionUrlEvent({
        path: "/",
        ...stripeRequest("evt_lambda_forged", { secret: "whsec_not_the_secret" }),
      }),
    );

    expect(ok.statusCode).toBe(200);
    expect(forged.statusCode).toBe(401);
    expect(json(forged).error.code).toBe("HOOKINBOX_SIGNATURE_MISMATCH");
    expect(await store.count("SELECT count(*) AS n FROM events")).toBe(1);
    await rejections(store, 1);
  });

  it("refuses a body marked base64 that is not, storing nothing", async () => {
    const { store, handler } = await env();
    const signed = stripeRequest("evt_lambda_bad64");
    const bad = [
      "eyJpZCI6MX0", // padding missing
      "eyJpZCI6MX0=!", // a character outside the alphabet
      "eyJp ZCI6MX0=", // a space
      "eyJpZCI6MX1=", // non-zero bits after the last byte: not what an encoder writes
    ];
    for (const rawBase64 of bad) {
      const result = await handler(
        functionUrlEvent({ path: "/webhooks/stripe", ...signed, rawBase64 }),
      );
      expect(result.statusCode).toBe(400);
      expect(json(result).error.code).toBe("HOOKINBOX_LAMBDA_BODY_INVALID");
    }
    expect(await store.count("SELECT count(*) AS n FROM events")).toBe(0);
    await rejections(store, bad.length);
    expect(await store.rows("SELECT DISTINCT code FROM receipts WHERE event_id IS NULL")).toEqual([
      { code: "HOOKINBOX_LAMBDA_BODY_INVALID" },
    ]);
  });

  it("answers 413 for a body over the limit, base64 or text", async () => {
    const { store, handler } = await env();
    const big = stripeRequest("evt_lambda_big", { extra: { pad: "x".repeat(5000) } });
    const asText = await handler(functionUrlEvent({ path: "/webhooks/stripe", ...big }));
    const asBase64 = await handler(
      httpApiEvent({
        source: "stripe",
        path: "/webhooks/stripe",
        headers: big.headers,
        body: Buffer.from(big.body),
      }),
    );

    for (const result of [asText, asBase64]) {
      expect(result.statusCode).toBe(413);
      expect(json(result).error.code).toBe("HOOKINBOX_BODY_TOO_LARGE");
    }
    expect(await store.count("SELECT count(*) AS n FROM events")).toBe(0);
    await rejections(store, 2);
  });

  it("answers other event shapes 500 HOOKINBOX_LAMBDA_EVENT_INVALID and stores nothing", async () => {
    const { store, inbox, handler } = await env();
    const request: LambdaRequest = { path: "/webhooks/stripe", ...stripeRequest("evt_v1") };
    // A request first, so the store exists (migrated) to be counted.
    const ready = await handler(
      functionUrlEvent({ method: "GET", path: "/readyz", headers: {}, body: "" }),
    );
    expect(json(ready)).toEqual({ ok: true, store: store.kind });
    const cases: Array<[unknown, string]> = [
      [restApiEvent({ ...request, source: "stripe" }), "a REST API (payload 1.0) event"],
      [albEvent(request), "an Application Load Balancer event"],
      [{ ...functionUrlEvent(request), version: "1.0" }, "a REST API (payload 1.0) event"],
      [{ source: "aws.events", "detail-type": "Scheduled Event" }, "an event with version null"],
      [null, "null"],
      ["POST /webhooks/stripe", "string"],
    ];
    for (const [event, shape] of cases) {
      const result = await handler(event);
      expect(result).toEqual({
        statusCode: 500,
        headers: { "content-type": "application/json; charset=utf-8" },
        body: JSON.stringify({
          error: {
            code: "HOOKINBOX_LAMBDA_EVENT_INVALID",
            message: `The Lambda event is not an HTTP request hookinbox reads; invoke it through a function URL or an HTTP API with payload format 2.0: got ${shape}`,
          },
        }),
        isBase64Encoded: false,
      });
    }
    expect(inbox.created()).toBe(1);
    expect(await store.count("SELECT count(*) AS n FROM receipts")).toBe(0);
    expect(await store.count("SELECT count(*) AS n FROM events")).toBe(0);
  });

  it("serves the admin routes: query string, Set-Cookie out as cookies, cookies back in", async () => {
    const { handler } = await env();
    for (const id of ["evt_lambda_q1", "evt_lambda_q2"]) {
      const stored = await handler(
        functionUrlEvent({ path: "/webhooks/stripe", ...stripeRequest(id) }),
      );
      expect(stored.statusCode).toBe(200);
    }
    const bearer = { authorization: `Bearer ${testAdminToken}` };
    const page = await handler(
      functionUrlEvent({
        method: "GET",
        path: "/api/events",
        query: "limit=1",
        headers: bearer,
        body: "",
      }),
    );
    expect(page.statusCode).toBe(200);
    expect(json(page).items).toHaveLength(1);

    const signIn = await handler(
      functionUrlEvent({
        path: "/api/session",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: testAdminToken }),
      }),
    );
    expect(signIn.statusCode).toBe(201);
    expect(signIn.headers["set-cookie"]).toBeUndefined();
    expect(signIn.cookies).toHaveLength(1);
    const cookie = signIn.cookies![0]!.split(";")[0]!;
    expect(cookie).toMatch(/^hookinbox_session=/);
    const session = await handler(
      functionUrlEvent({
        method: "GET",
        path: "/api/session",
        headers: {},
        body: "",
        cookies: ["a=1", cookie],
      }),
    );
    expect(session.statusCode).toBe(200);
    expect(json(session).csrfToken).toBe(json(signIn).csrfToken);
    // Sign-out answers 204 with an empty body: no body at all in the result, the cookie cleared.
    const signOut = await handler(
      functionUrlEvent({
        method: "DELETE",
        path: "/api/session",
        headers: { "x-hookinbox-csrf": json(signIn).csrfToken },
        body: "",
        cookies: [cookie],
      }),
    );
    expect(signOut).toEqual({
      statusCode: 204,
      headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" },
      body: "",
      isBase64Encoded: false,
      cookies: ["hookinbox_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"],
    });

    const health = await handler(
      functionUrlEvent({ method: "GET", path: "/healthz", headers: {}, body: "" }),
    );
    expect(health).toMatchObject({ statusCode: 200, isBase64Encoded: false, body: '{"ok":true}' });
    const unknown = await handler(
      functionUrlEvent({ path: "/webhooks/nope", headers: {}, body: "{}" }),
    );
    expect(unknown.statusCode).toBe(404);
    expect(json(unknown).error.code).toBe("HOOKINBOX_SOURCE_NOT_FOUND");
  });
});

describe("drainBudget", () => {
  it("caps maxMs at the time left minus grace and a second, never below 0", () => {
    expect(drainBudget(60_000, { maxMs: 120_000, graceMs: 5_000 })).toEqual({
      maxMs: 54_000,
      graceMs: 5_000,
    });
    expect(drainBudget(60_000, { maxMs: 20_000, graceMs: 5_000, concurrency: 4 })).toEqual({
      maxMs: 20_000,
      graceMs: 5_000,
      concurrency: 4,
    });
    // processAvailable's defaults: 10 s, 5 s of grace.
    expect(drainBudget(900_000, {})).toEqual({ maxMs: 10_000, graceMs: 5_000 });
    expect(drainBudget(12_000, {})).toEqual({ maxMs: 6_000, graceMs: 5_000 });
    expect(drainBudget(3_000, { graceMs: 5_000 })).toEqual({ maxMs: 0, graceMs: 5_000 });
    expect(drainBudget(undefined, { maxMs: 7_000 })).toEqual({ maxMs: 7_000, graceMs: 5_000 });
  });
});

describe.each(storeVariants())(
  "hookinbox/aws-lambda lambdaScheduledHandler ($name)",
  (variant: StoreVariant) => {
    it("runs exactly the due deliveries, logs and returns the summary", async () => {
      const store = await variant.open();
      cleanups.push(() => store.cleanup());
      const runs: string[] = [];
      const handler: Handler<{ type: string; n: number }> = async (event) => {
        runs.push(`${event.payload.type}:${event.payload.n}`);
        if (event.payload.type === "fail") throw new Error("not yet");
      };
      const env = processingInbox(
        {
          store: store.url,
          handlers: { "std:*": { handler, options: { lease: "10m" } } },
          retry: { schedule: ["1h"], maxAttempts: 3, jitter: "none" },
        },
        variant.writer ? { sqliteWriter: variant.writer } : {},
      );
      cleanups.push(env.cleanup);
      const logged: string[] = [];
      const log = vi.spyOn(console, "log").mockImplementation((line: string) => {
        logged.push(line);
      });
      cleanups.push(() => log.mockRestore());
      const drain = lambdaScheduledHandler(() => env.inbox, { maxMs: 60_000, graceMs: 2_000 });
      const context = { getRemainingTimeInMillis: () => 30_000, awsRequestId: "req-1" };

      for (const n of [1, 2, 3]) await env.post(`msg_ok_${n}`, { type: "ok", n });
      await env.post("msg_fail", { type: "fail", n: 4 });
      const first = await drain(
        { "detail-type": "Scheduled Event", source: "aws.events" },
        context,
      );

      expect(first).toEqual({ done: 3, retried: 1, dead: 0, failed: 0, released: 0, remaining: 0 });
      expect(runs.sort()).toEqual(["fail:4", "ok:1", "ok:2", "ok:3"]);
      expect(await store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")).toBe(
        3,
      );
      expect(
        await store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'pending'"),
      ).toBe(1);
      expect(logged.map((line) => JSON.parse(line))).toEqual([
        {
          msg: "hookinbox: scheduled drain",
          ...first,
          maxMs: 27_000,
          graceMs: 2_000,
          requestId: "req-1",
        },
      ]);

      // The retry is due in an hour: the next drain runs nothing, then only the new event.
      const second = await drain({}, context);
      const nothing = { done: 0, retried: 0, dead: 0, failed: 0, released: 0, remaining: 0 };
      expect(second).toEqual(nothing);
      await env.post("msg_ok_5", { type: "ok", n: 5 });
      const third = await drain({}, context);
      expect(third).toEqual({ ...nothing, done: 1 });
      expect(runs).toHaveLength(5);
      expect(await store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")).toBe(
        4,
      );
    });
  },
);
