import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { until } from "../helpers/processing.ts";
import { secrets, stripeRequest, testSources } from "../helpers/signers.ts";
import { storeFactories } from "../helpers/stores.ts";
import { destination, forwardingInbox, receiver } from "./forward-env.ts";

// What a destination's answers do: Retry-After, timeouts, provider headers an app verifies with
// the provider's SDK, and ordering keys, against real HTTP receivers on loopback.

const stripe = new Stripe("sk_test_hookinbox");

describe.each(storeFactories())("forwarding outcomes ($name)", (factory) => {
  it("429 with Retry-After: 2 waits at least 2 s before the next attempt", async () => {
    const app = await receiver((_r, index) =>
      index === 0 ? { status: 429, headers: { "retry-after": "2" } } : { status: 200 },
    );
    const env = await forwardingInbox(factory, { app: destination(app.url) });
    const worker = env.inbox.startWorker();
    const { eventId } = await env.post("msg_429", { type: "t" });
    await until(async () => (await env.inbox.store.getEvent(eventId))?.status === "done");
    await worker.stop();
    expect(app.requests).toHaveLength(2);
    expect(app.requests[1]!.at - app.requests[0]!.at).toBeGreaterThanOrEqual(2000);
    expect(app.requests.map((r) => r.headers["hookinbox-attempt"])).toEqual(["1", "2"]);
    const log = (await env.inbox.store.getEvent(eventId))!.deliveries[0]!.attemptLog!;
    expect(log.map((a) => a.response?.status)).toEqual([429, 200]);
    expect(log[0]!.response!.headers!["retry-after"]).toBe("2");
  });

  it("503 with an HTTP-date Retry-After waits for that date", async () => {
    let retryAt = 0;
    const app = await receiver((_r, index) => {
      if (index > 0) return { status: 200 };
      // Whole seconds: an HTTP date has no milliseconds.
      retryAt = (Math.floor(Date.now() / 1000) + 3) * 1000;
      return { status: 503, headers: { "retry-after": new Date(retryAt).toUTCString() } };
    });
    const env = await forwardingInbox(factory, { app: destination(app.url) });
    const worker = env.inbox.startWorker();
    const { eventId } = await env.post("msg_503_date", { type: "t" });
    await until(async () => (await env.inbox.store.getEvent(eventId))?.status === "done");
    await worker.stop();
    expect(app.requests).toHaveLength(2);
    expect(app.requests[1]!.at).toBeGreaterThanOrEqual(retryAt);
  });

  it("a slow destination times out, and the retry (same webhook-id) is delivered", async () => {
    const app = await receiver((_r, index) =>
      index === 0 ? { status: 200, delayMs: 3000 } : { status: 200 },
    );
    const env = await forwardingInbox(factory, { app: destination(app.url, { timeout: "300ms" }) });
    const worker = env.inbox.startWorker();
    const { eventId } = await env.post("msg_slow", { type: "t" });
    await until(async () => (await env.inbox.store.getEvent(eventId))?.status === "done");
    await worker.stop();
    expect(app.requests).toHaveLength(2);
    expect(new Set(app.requests.map((r) => r.headers["webhook-id"]))).toEqual(
      new Set([`${eventId}:app`]),
    );
    const log = (await env.inbox.store.getEvent(eventId))!.deliveries[0]!.attemptLog!;
    expect(log.map((a) => a.outcome)).toEqual(["error", "success"]);
    expect(log[0]!.response).toMatchObject({ status: null, errorClass: "timeout" });
    expect(log[0]!.errorMessage).toContain("HOOKINBOX_FORWARD_TIMEOUT");
  });

  it("a connection reset without an answer is retried under the same webhook-id", async () => {
    const app = await receiver((_r, index) => {
      if (index === 0) throw new Error("the app crashes mid-request: the socket is destroyed");
      return { status: 200 };
    });
    const env = await forwardingInbox(factory, { app: destination(app.url) });
    const worker = env.inbox.startWorker();
    const { eventId } = await env.post("msg_reset", { type: "t" });
    await until(async () => (await env.inbox.store.getEvent(eventId))?.status === "done");
    await worker.stop();
    expect(app.requests).toHaveLength(2);
    expect(new Set(app.requests.map((r) => r.headers["webhook-id"])).size).toBe(1);
    const log = (await env.inbox.store.getEvent(eventId))!.deliveries[0]!.attemptLog!;
    expect(log.map((a) => a.outcome)).toEqual(["error", "success"]);
    expect(log[0]!.response).toMatchObject({ status: null });
    expect(log[0]!.errorMessage).toContain("HOOKINBOX_FORWARD_NETWORK");
  });

  it("an app verifying with stripe.webhooks.constructEvent on the forwarded headers accepts every event", async () => {
    const verified: string[] = [];
    const app = await receiver((request) => {
      try {
        const event = stripe.webhooks.constructEvent(
          request.body,
          request.headers["stripe-signature"]!,
          secrets.stripe,
        );
        verified.push(event.id);
        return { status: 200 };
      } catch {
        return { status: 400 };
      }
    });
    const env = await forwardingInbox(
      factory,
      { app: destination(app.url, { retry: { maxAttempts: 1 } }) },
      { sources: { stripe: testSources.stripe }, routes: [{ from: "stripe", to: ["app"] }] },
    );
    const worker = env.inbox.startWorker();
    for (let i = 0; i < 3; i++) {
      const signed = stripeRequest(`evt_forwarded_${i}`);
      const response = await env.inbox.handle({
        method: "POST",
        url: "/webhooks/stripe",
        headers: signed.headers,
        body: new TextEncoder().encode(signed.body),
      });
      expect(response.status).toBe(200);
    }
    await until(
      async () =>
        (await env.store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")) === 3,
      10_000,
      "three verified forwards",
    );
    await worker.stop();
    expect(verified.sort()).toEqual(["evt_forwarded_0", "evt_forwarded_1", "evt_forwarded_2"]);
    expect(app.requests).toHaveLength(3);
    expect(app.requests.every((r) => r.headers["hookinbox-type"] === "invoice.paid")).toBe(true);
  });

  it("ordering keys hold at the destination through failures", async () => {
    const keys = ["a", "b", "c"];
    const perKey = 8;
    // The first attempt of every third event fails, so retries interleave with later events.
    // Chosen by event, not by request number: with three keys taking turns, "every third request"
    // kept landing on one key's retries until that delivery was dead and its key blocked.
    const failing = (key: string, seq: number) => (seq + keys.indexOf(key)) % 3 === 2;
    const app = await receiver((r) => {
      const { key, seq } = JSON.parse(r.body.toString()) as { key: string; seq: number };
      const firstTry = r.headers["hookinbox-attempt"] === "1";
      return { status: firstTry && failing(key, seq) ? 500 : 200 };
    });
    const env = await forwardingInbox(factory, { app: destination(app.url) });
    const worker = env.inbox.startWorker();
    for (let seq = 1; seq <= perKey; seq++)
      for (const key of keys) await env.post(`msg_${key}_${seq}`, { type: "t", key, seq });
    await until(
      async () =>
        (await env.store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")) ===
        keys.length * perKey,
      20_000,
      "every delivery done",
    );
    await worker.stop();
    for (const key of keys) {
      // Each event once, and once more right after it where its first attempt failed.
      const expected = Array.from({ length: perKey }, (_, i) => i + 1).flatMap((seq) =>
        failing(key, seq) ? [seq, seq] : [seq],
      );
      const seen = app.requests
        .map((r) => JSON.parse(r.body.toString()) as { key: string; seq: number })
        .filter((p) => p.key === key)
        .map((p) => p.seq);
      // Every attempt of seq n comes before any attempt of seq n+1: retries repeat, never reorder.
      expect(seen).toEqual(expected);
    }
    expect(app.requests).toHaveLength(keys.length * perKey + 8);
  });
});
