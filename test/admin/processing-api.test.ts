import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Gateway, startGateway } from "../../src/gateway/start-gateway.ts";
import { PermanentError } from "../../src/index.ts";
import type { DeadLetterAlert } from "../../src/store/queue-types.ts";
import { testAdminToken } from "../helpers/admin-token.ts";
import { githubRequest, stripeRequest, testSources } from "../helpers/signers.ts";
import { tempDir } from "../helpers/temp.ts";

// The processing routes of the admin API over real HTTP, against an in-process gateway whose
// handlers are plain functions and whose store is a SQLite file in a temp folder.

const token = testAdminToken;
let gateway: Gateway;
let cleanup: () => void;
let deadAlerts: DeadLetterAlert[];
let heldAlerts: Array<{ effectId: string; name: string; eventId: string }>;
/** The charge handler waits on this before it claims its effect. */
let chargeGate: Promise<void>;
let refunds: number;
/** Whether the voided-invoice handler (onDeadLetter: "block", the default) still fails. */
let voidFails: boolean;

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

beforeEach(async () => {
  const tmp = tempDir();
  cleanup = tmp.cleanup;
  deadAlerts = [];
  heldAlerts = [];
  chargeGate = Promise.resolve();
  refunds = 0;
  voidFails = true;
  gateway = await startGateway(
    {
      store: `sqlite:${join(tmp.dir, "hookinbox.db")}`,
      sources: testSources,
      worker: { lease: "300ms", pollInterval: "50ms" },
      handlers: {
        "stripe:invoice.paid": async () => {},
        "stripe:invoice.payment_failed": {
          handler: async () => {
            throw new PermanentError("card declined for good");
          },
          options: { onDeadLetter: "continue" },
        },
        "stripe:charge.*": async (_event: unknown, ctx: any) => {
          await chargeGate;
          await ctx.effect(
            "refund",
            async () => {
              refunds++;
              return { refund: "re_1" };
            },
            { onStale: "hold", staleAfter: "1s" },
          );
        },
        "stripe:customer.updated": () => new Promise(() => {}),
        "stripe:invoice.voided": async () => {
          if (voidFails) throw new PermanentError("the ledger refuses voids");
        },
      },
      alerts: {
        onDeadLetter: (alert: DeadLetterAlert) => {
          deadAlerts.push(alert);
        },
        onEffectHeld: (alert: { effectId: string; name: string; eventId: string }) => {
          heldAlerts.push(alert);
        },
      },
    },
    { env: {}, port: 0, adminToken: token },
  );
});

afterEach(async () => {
  await gateway.close();
  cleanup();
});

async function post(type: string, id: string, object = `obj_${id}`): Promise<string> {
  const request = stripeRequest(id, { type, extra: { data: { object: { id: object } } } });
  const response = await fetch(`${gateway.url}/webhooks/stripe`, {
    method: "POST",
    headers: request.headers,
    body: request.body,
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { eventId: string }).eventId;
}

async function api(
  method: string,
  path: string,
  body?: unknown,
  auth = true,
): Promise<{ status: number; json: Record<string, any> }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: {
      ...(auth ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function eventWhere(id: string, what: string, test: (e: Record<string, any>) => boolean) {
  return waitFor(what, async () => {
    const { json } = await api("GET", `/api/events/${id}`);
    return test(json) ? json : undefined;
  });
}

const errorOf = (code: string) => ({ error: { code, message: expect.any(String) } });

describe("admin API: processing routes", () => {
  it("GET /api/events/:id includes the deliveries with their attempt logs", async () => {
    const id = await post("invoice.payment_failed", "evt_detail");
    const event = await eventWhere(id, "the dead letter", (e) => e.status === "dead");
    expect(event.deliveries).toEqual([
      {
        id: expect.stringMatching(/^dlv_/),
        eventId: id,
        source: "stripe",
        type: "invoice.payment_failed",
        target: "stripe:invoice.payment_failed",
        status: "dead",
        orderingKey: "obj_evt_detail",
        version: expect.any(Number),
        attempts: 1,
        runAt: expect.any(String),
        leaseOwner: null,
        leaseExpiresAt: null,
        lastError: "PermanentError: card declined for good",
        isReplay: false,
        replayOf: null,
        createdAt: expect.any(String),
        completedAt: expect.any(String),
        attemptLog: [
          {
            id: expect.stringMatching(/^att_/),
            attempt: 1,
            workerId: gateway.worker!.id,
            startedAt: expect.any(String),
            endedAt: expect.any(String),
            outcome: "permanent",
            errorMessage: "PermanentError: card declined for good",
            errorStack: expect.stringContaining("card declined for good"),
          },
        ],
        runbook: null,
      },
    ]);
  });

  it("POST /api/events/:id/replay: 201 with flagged deliveries; 404, 400 and 405 otherwise", async () => {
    const id = await post("invoice.paid", "evt_replay");
    const done = await eventWhere(id, "the first delivery", (e) => e.status === "done");
    const original = done.deliveries[0];

    const replay = await api("POST", `/api/events/${id}/replay`);
    expect(replay.status).toBe(201);
    expect(replay.json.deliveries).toEqual([
      expect.objectContaining({
        eventId: id,
        target: "stripe:invoice.paid",
        status: "pending",
        attempts: 0,
        isReplay: true,
        replayOf: original.id,
      }),
    ]);
    const explicit = await api("POST", `/api/events/${id}/replay`, {
      targets: ["stripe:invoice.paid"],
    });
    expect(explicit.status).toBe(201);
    expect(explicit.json.deliveries).toHaveLength(1);
    // The second replay links to the latest delivery of the target: the first replay.
    expect(explicit.json.deliveries[0].replayOf).toBe(replay.json.deliveries[0].id);

    const after = await eventWhere(
      id,
      "both replays",
      (e) => e.deliveries.length === 3 && e.deliveries.every((d: any) => d.status === "done"),
    );
    // Nothing about the original changed: same attempts, same log.
    expect(after.deliveries[0]).toEqual(original);
    expect(after.deliveries.map((d: any) => d.isReplay)).toEqual([false, true, true]);

    expect(await api("POST", "/api/events/evt_01JD7Q5Z8X9K3M4N5P6R7S8T9V/replay")).toEqual({
      status: 404,
      json: errorOf("HOOKINBOX_EVENT_NOT_FOUND"),
    });
    expect(
      await api("POST", `/api/events/${id}/replay`, { targets: ["stripe:invoice.nope"] }),
    ).toEqual({ status: 400, json: errorOf("HOOKINBOX_UNKNOWN_TARGET") });
    for (const bad of ["not json", "[]", '"x"', JSON.stringify({ targets: "stripe:*" })]) {
      expect(await api("POST", `/api/events/${id}/replay`, bad)).toEqual({
        status: 400,
        json: errorOf("HOOKINBOX_QUERY_INVALID"),
      });
    }
    expect(await api("GET", `/api/events/${id}/replay`)).toEqual({
      status: 405,
      json: errorOf("HOOKINBOX_METHOD_NOT_ALLOWED"),
    });
    expect((await api("POST", `/api/events/${id}/replay`, undefined, false)).status).toBe(401);
  });

  it("POST /api/replays: replays by filter and reports event and delivery counts", async () => {
    const paid = await post("invoice.paid", "evt_bulk_1");
    await post("invoice.paid", "evt_bulk_2");
    const failed = await post("invoice.payment_failed", "evt_bulk_3");
    const push = await githubRequest("gh-delivery-1", JSON.stringify({ ref: "refs/heads/main" }));
    expect(
      (await fetch(`${gateway.url}/webhooks/github`, { method: "POST", ...push })).status,
    ).toBe(200);
    await eventWhere(failed, "the dead letter", (e) => e.status === "dead");
    await eventWhere(paid, "the paid event", (e) => e.status === "done");

    expect(await api("POST", "/api/replays", { source: "stripe" })).toEqual({
      status: 201,
      json: { events: 3, deliveries: 3 },
    });
    expect(await api("POST", "/api/replays", { source: "stripe", type: "invoice.paid" })).toEqual({
      status: 201,
      json: { events: 2, deliveries: 2 },
    });
    // An ignored event routes nowhere: counted as an event, no delivery.
    expect(await api("POST", "/api/replays", { source: "github" })).toEqual({
      status: 201,
      json: { events: 1, deliveries: 0 },
    });
    // Fixed targets apply to every matching event.
    expect(
      await api("POST", "/api/replays", { source: "github", targets: ["stripe:invoice.paid"] }),
    ).toEqual({ status: 201, json: { events: 1, deliveries: 1 } });
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    expect(
      await api("POST", "/api/replays", {
        receivedFrom: hourAgo,
        receivedTo: new Date(Date.now() - 1_800_000).toISOString(),
      }),
    ).toEqual({ status: 201, json: { events: 0, deliveries: 0 } });
    expect(await api("POST", "/api/replays", { source: "stripe", receivedFrom: hourAgo })).toEqual({
      status: 201,
      json: { events: 3, deliveries: 3 },
    });
    // Event status "dead": only the failed event (its replays die too, without blocking).
    await waitFor("every replay to settle", async () => {
      const { json } = await api("GET", "/api/deliveries?status=pending");
      const running = await api("GET", "/api/deliveries?status=running");
      return json.items.length + running.json.items.length === 0 ? true : undefined;
    });
    expect(await api("POST", "/api/replays", { status: "dead" })).toEqual({
      status: 201,
      json: { events: 1, deliveries: 1 },
    });

    for (const [bad, code] of [
      [{ receivedFrom: "yesterday" }, "HOOKINBOX_QUERY_INVALID"],
      [{ source: 42 }, "HOOKINBOX_QUERY_INVALID"],
      [{ targets: [1] }, "HOOKINBOX_QUERY_INVALID"],
      [{ source: "stripe", targets: ["stripe:nope"] }, "HOOKINBOX_UNKNOWN_TARGET"],
    ] as const) {
      expect(await api("POST", "/api/replays", bad)).toEqual({ status: 400, json: errorOf(code) });
    }
    expect(await api("POST", "/api/replays", "nope")).toEqual({
      status: 400,
      json: errorOf("HOOKINBOX_QUERY_INVALID"),
    });
    expect(await api("GET", "/api/replays")).toEqual({
      status: 405,
      json: errorOf("HOOKINBOX_METHOD_NOT_ALLOWED"),
    });
  });

  it("GET /api/deliveries?status=dead pages with a cursor; POST …/retry puts one back", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await post("invoice.payment_failed", `evt_dead_${i}`));
    const ok = await post("invoice.paid", "evt_alive");
    for (const id of ids) await eventWhere(id, "a dead letter", (e) => e.status === "dead");
    const okEvent = await eventWhere(ok, "the done event", (e) => e.status === "done");
    await waitFor("five alerts", async () => (deadAlerts.length === 5 ? true : undefined));

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `/api/deliveries?status=dead&limit=2${cursor ? `&cursor=${cursor}` : ""}`;
      const page = await api("GET", query);
      expect(page.status).toBe(200);
      expect(page.json.items.length).toBeLessThanOrEqual(2);
      for (const d of page.json.items) {
        expect(d).toMatchObject({ status: "dead", target: "stripe:invoice.payment_failed" });
        seen.push(d.id);
      }
      cursor = page.json.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(5);
    expect([...seen].sort().reverse()).toEqual(seen); // newest first, no repeats
    const byTarget = await api("GET", "/api/deliveries?status=dead&target=stripe:invoice.paid");
    expect(byTarget.json).toEqual({ items: [], nextCursor: null });
    const byEvent = await api("GET", `/api/deliveries?eventId=${ok}`);
    expect(byEvent.json.items.map((d: any) => d.status)).toEqual(["done"]);
    expect(await api("GET", "/api/deliveries?status=failed")).toEqual({
      status: 400,
      json: errorOf("HOOKINBOX_QUERY_INVALID"),
    });
    expect(await api("GET", "/api/deliveries?limit=0")).toEqual({
      status: 400,
      json: errorOf("HOOKINBOX_QUERY_INVALID"),
    });
    expect(await api("GET", "/api/deliveries?cursor=garbage")).toEqual({
      status: 400,
      json: errorOf("HOOKINBOX_CURSOR_INVALID"),
    });

    // Retry: 200, pending now, attempts kept; it runs again and dies again, alerting again.
    const target = seen[0]!;
    const retried = await api("POST", `/api/deliveries/${target}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.json).toMatchObject({ id: target, status: "pending", attempts: 1 });
    const dead = await waitFor("the retried delivery to die again", async () => {
      const { json } = await api("GET", `/api/deliveries?eventId=${retried.json.eventId}`);
      const d = json.items[0];
      return d.status === "dead" && d.attempts === 2 ? d : undefined;
    });
    expect(dead.lastError).toBe("PermanentError: card declined for good");
    await waitFor("the second alert", async () => (deadAlerts.length === 6 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 300));
    // One alert per dead-lettering: five first deaths, then the retried one once more.
    expect(deadAlerts).toHaveLength(6);
    expect(deadAlerts.filter((a) => a.deliveryId === target)).toHaveLength(2);
    expect(deadAlerts[5]).toMatchObject({
      deliveryId: target,
      source: "stripe",
      type: "invoice.payment_failed",
      target: "stripe:invoice.payment_failed",
      attempts: 2,
      lastError: "PermanentError: card declined for good",
    });

    expect(await api("POST", `/api/deliveries/${okEvent.deliveries[0].id}/retry`)).toEqual({
      status: 409,
      json: errorOf("HOOKINBOX_DELIVERY_NOT_RETRYABLE"),
    });
    expect(await api("POST", "/api/deliveries/dlv_01JD7Q5Z8X9K3M4N5P6R7S8T9V/retry")).toEqual({
      status: 404,
      json: errorOf("HOOKINBOX_DELIVERY_NOT_FOUND"),
    });
    expect(await api("GET", `/api/deliveries/${target}/retry`)).toEqual({
      status: 405,
      json: errorOf("HOOKINBOX_METHOD_NOT_ALLOWED"),
    });
    expect(await api("DELETE", "/api/deliveries")).toEqual({
      status: 405,
      json: errorOf("HOOKINBOX_METHOD_NOT_ALLOWED"),
    });
  });

  it("GET /api/effects?status=held and POST /api/effects/:id/resolve; GET /api/stuck", async () => {
    const gate = deferred();
    chargeGate = gate.promise;
    const id = await post("charge.refunded", "evt_refund", "ch_1");
    await eventWhere(
      id,
      "the charge handler to start",
      (e) => e.deliveries[0]?.status === "running",
    );
    // What a worker that died mid-refund leaves behind: an old claim by an attempt that is over.
    const claim = await gateway.inbox.store.claimEffect({
      eventId: id,
      target: "stripe:charge.*",
      name: "refund",
      claimant: "att_of_a_worker_that_died",
      onStale: "hold",
      staleAfterMs: 1000,
      now: Date.now() - 60_000,
    });
    expect(claim.state).toBe("claimed");
    gate.resolve();
    const dead = await eventWhere(id, "the held effect", (e) => e.status === "dead");
    expect(dead.deliveries[0].lastError).toMatch(/^EffectHeldError: effect "refund"/);
    expect(refunds).toBe(0);
    expect(heldAlerts).toEqual([
      expect.objectContaining({ effectId: claim.effectId, name: "refund", eventId: id }),
    ]);

    const held = await api("GET", "/api/effects?status=held");
    expect(held).toEqual({
      status: 200,
      json: {
        items: [
          {
            id: claim.effectId,
            eventId: id,
            target: "stripe:charge.*",
            name: "refund",
            status: "held",
            onStale: "hold",
            staleAfterMs: 1000,
            claims: 1,
            claimedAt: expect.any(String),
            completedAt: null,
          },
        ],
      },
    });
    expect((await api("GET", `/api/effects?eventId=${id}`)).json.items).toHaveLength(1);
    expect((await api("GET", "/api/effects?eventId=evt_other")).json.items).toHaveLength(0);
    expect(await api("GET", "/api/effects?status=stuck")).toEqual({
      status: 400,
      json: errorOf("HOOKINBOX_QUERY_INVALID"),
    });

    const stuck = await api("GET", "/api/stuck");
    expect(stuck.status).toBe(200);
    // The same shape as `hookinbox stuck --json` (one operation): `stuck` says whether anything is.
    expect(stuck.json).toEqual({
      stuck: true,
      expiredLeases: [],
      abandoned: [],
      blockedKeys: [],
      heldEffects: [expect.objectContaining({ id: claim.effectId, status: "held" })],
      oldUndone: [],
    });
    const strict = await api("GET", "/api/stuck?olderThan=0s");
    expect(strict.json.oldUndone).toEqual([
      {
        id,
        source: "stripe",
        type: "charge.refunded",
        status: "dead",
        receivedAt: expect.any(String),
      },
    ]);
    expect(await api("GET", "/api/stuck?olderThan=soon")).toEqual({
      status: 400,
      json: errorOf("HOOKINBOX_QUERY_INVALID"),
    });

    for (const body of [{}, { resolution: "maybe" }, "nope"]) {
      expect(await api("POST", `/api/effects/${claim.effectId}/resolve`, body)).toEqual({
        status: 400,
        json: errorOf("HOOKINBOX_QUERY_INVALID"),
      });
    }
    expect(
      await api("POST", "/api/effects/eff_01JD7Q5Z8X9K3M4N5P6R7S8T9V/resolve", {
        resolution: "done",
      }),
    ).toEqual({ status: 404, json: errorOf("HOOKINBOX_EFFECT_NOT_FOUND") });
    expect(await api("GET", `/api/effects/${claim.effectId}/resolve`)).toEqual({
      status: 405,
      json: errorOf("HOOKINBOX_METHOD_NOT_ALLOWED"),
    });

    // The operator found no refund at the provider: release it, then retry the delivery.
    const released = await api("POST", `/api/effects/${claim.effectId}/resolve`, {
      resolution: "release",
    });
    expect(released.status).toBe(200);
    expect(released.json).toMatchObject({ id: claim.effectId, name: "refund" });
    expect((await api("GET", "/api/effects?status=held")).json.items).toEqual([]);
    expect((await api("POST", `/api/deliveries/${dead.deliveries[0].id}/retry`)).status).toBe(200);
    await eventWhere(id, "the refund", (e) => e.status === "done");
    expect(refunds).toBe(1);
    expect((await api("GET", `/api/effects?eventId=${id}`)).json.items).toEqual([
      expect.objectContaining({ name: "refund", status: "done", claims: 1 }),
    ]);
    expect((await api("GET", "/api/stuck")).json).toEqual({
      stuck: false,
      expiredLeases: [],
      abandoned: [],
      blockedKeys: [],
      heldEffects: [],
      oldUndone: [],
    });
  });

  it("a replay supersedes its dead original that blocked the key, and the event is then done", async () => {
    const id = await post("invoice.voided", "evt_void", "in_void");
    const dead = await eventWhere(id, "the dead letter", (e) => e.status === "dead");
    const original = dead.deliveries[0];
    // Fixed; the operator replays the event: the replay takes the dead original's place at the
    // head of its ordering key instead of waiting behind it.
    voidFails = false;
    const replay = await api("POST", `/api/events/${id}/replay`);
    expect(replay.status).toBe(201);
    const replayId = replay.json.deliveries[0].id;
    const done = await eventWhere(id, "the replay to finish", (e) => e.status === "done");
    expect(done.deliveries.map((d: any) => [d.id, d.status, d.attempts, d.isReplay])).toEqual([
      [original.id, "dead", 1, false],
      [replayId, "done", 1, true],
    ]);
    expect(done.deliveries[1].replayOf).toBe(original.id);
  });

  it("GET /api/stuck lists a lease that expired with no worker left to rescue it", async () => {
    const id = await post("customer.updated", "evt_hang", "cus_1");
    const running = await eventWhere(
      id,
      "the handler to start",
      (e) => e.deliveries[0]?.status === "running",
    );
    // The worker goes away without finishing (its handler never returns): the lease runs out.
    await gateway.worker!.stop(10);
    await new Promise((resolve) => setTimeout(resolve, 450));
    const stuck = await api("GET", "/api/stuck");
    expect(stuck.json.expiredLeases).toEqual([
      expect.objectContaining({
        id: running.deliveries[0].id,
        status: "running",
        leaseOwner: gateway.worker!.id,
      }),
    ]);
    expect((await api("GET", "/api/stuck?limit=0")).status).toBe(400);
    expect(await api("PUT", "/api/stuck")).toEqual({
      status: 405,
      json: errorOf("HOOKINBOX_METHOD_NOT_ALLOWED"),
    });
  });
});
