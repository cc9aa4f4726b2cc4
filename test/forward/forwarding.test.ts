import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { processingInbox, until } from "../helpers/processing.ts";
import { type Receiver, startReceiver } from "../helpers/receiver.ts";
import { type StoreFactory, storeFactories } from "../helpers/stores.ts";

const destinationSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const otherSecret = "whsec_dGhpcyBpcyBub3QgdGhlIHJpZ2h0IHNlY3JldA==";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

async function setup(
  factory: StoreFactory,
  destinations: Record<string, Record<string, unknown>>,
  extra: Record<string, unknown> = {},
) {
  const store = await factory.open();
  cleanups.push(() => store.cleanup());
  const env = processingInbox({
    store: store.url,
    destinations,
    routes: [{ from: "std", to: Object.keys(destinations) }],
    retry: { schedule: ["50ms"], jitter: "none", maxAttempts: 6 },
    worker: { pollInterval: "50ms" },
    ...extra,
  });
  cleanups.push(env.cleanup);
  return { ...env, store };
}

function destination(url: string, more: Record<string, unknown> = {}) {
  return { url, secret: destinationSecret, allowPrivateNetworks: true, timeout: "5s", ...more };
}

describe.each(storeFactories())("forwarding to destinations ($kind)", (factory) => {
  it("a standardwebhooks receiver verifies every forwarded request; a wrong secret rejects all", async () => {
    const good = await receiver();
    const bad = await receiver();
    const env = await setup(factory, {
      app: destination(good.url),
      other: destination(bad.url, { secret: otherSecret }),
    });
    const worker = env.inbox.startWorker();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await env.post(`msg_sw_${i}`, { type: "order.paid", n: i, text: "é ✓" })).eventId);
    await until(() => good.requests.length === 5 && bad.requests.length === 5, 10_000, "forwards");
    await worker.stop();
    const verifier = new Webhook(destinationSecret);
    for (const request of good.requests) {
      expect(() => verifier.verify(request.body, request.headers)).not.toThrow();
      expect(request.headers["hookinbox-replay"]).toBe("false");
      expect(request.headers["hookinbox-attempt"]).toBe("1");
      expect(request.headers["hookinbox-source"]).toBe("std");
      expect(request.headers["hookinbox-type"]).toBe("order.paid");
      expect(ids).toContain(request.headers["hookinbox-event-id"]);
      expect(request.headers["webhook-id"]).toBe(`${request.headers["hookinbox-event-id"]}:app`);
      // Byte for byte: the stored raw body.
      const event = await env.inbox.store.getEvent(request.headers["hookinbox-event-id"]!);
      expect(Buffer.compare(request.body, Buffer.from(event!.body))).toBe(0);
    }
    expect(new Set(good.requests.map((r) => r.headers["webhook-id"])).size).toBe(5);
    for (const request of bad.requests)
      expect(() => verifier.verify(request.body, request.headers)).toThrow();
    const done = await env.store.count(
      "SELECT count(*) AS n FROM deliveries WHERE status = 'done'",
    );
    expect(done).toBe(10);
  });

  it("a destination failing its first k attempts: one webhook-id, attempts 1..k+1, each attempt recorded", async () => {
    const k = 3;
    const app = await receiver();
    app.respond((_r, index) =>
      index < k
        ? {
            status: 500,
            body: `failure ${index + 1} ${"x".repeat(5000)}`,
            headers: { "x-request-id": `r${index}` },
          }
        : { status: 204 },
    );
    const env = await setup(factory, { app: destination(app.url) });
    const worker = env.inbox.startWorker();
    const { eventId } = await env.post("msg_fail_k", { type: "t" });
    await until(() => app.requests.length === k + 1, 10_000, "k+1 attempts");
    await until(async () => (await env.inbox.store.getEvent(eventId))?.status === "done");
    await worker.stop();
    expect(new Set(app.requests.map((r) => r.headers["webhook-id"]))).toEqual(
      new Set([`${eventId}:app`]),
    );
    expect(app.requests.map((r) => r.headers["hookinbox-attempt"])).toEqual(["1", "2", "3", "4"]);
    const event = await env.inbox.store.getEvent(eventId);
    const log = event!.deliveries[0]!.attemptLog!;
    expect(log.map((a) => a.outcome)).toEqual(["error", "error", "error", "success"]);
    expect(log.map((a) => a.response?.status)).toEqual([500, 500, 500, 204]);
    expect(log[0]!.response!.errorClass).toBe("http-status");
    expect(log[0]!.response!.headers!["x-request-id"]).toBe("r0");
    expect(log[0]!.response!.body!.length).toBe(4096);
    expect(log[0]!.response!.body!.startsWith("failure 1 ")).toBe(true);
    expect(log[0]!.errorMessage).toContain("HOOKINBOX_FORWARD_STATUS");
    expect(log[3]!.response!.errorClass).toBeNull();
    expect(log.every((a) => typeof a.response!.latencyMs === "number")).toBe(true);
  });
});
