import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { until } from "../helpers/processing.ts";
import { storeFactories } from "../helpers/stores.ts";
import {
  destination,
  destinationSecret,
  otherSecret,
  receiver,
  forwardingInbox as setup,
} from "./forward-env.ts";

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

  it("secret rotation: every active secret signs, so a receiver on the old or the new one verifies; an expired one does not sign", async () => {
    const app = await receiver();
    const expired = "whsec_ZXhwaXJlZCBzZWNyZXQgbm8gbG9uZ2VyIHVzZWQ=";
    const env = await setup(factory, {
      app: destination(app.url, {
        secret: [
          { value: expired, notAfter: new Date(Date.now() - 60_000).toISOString() },
          destinationSecret,
          otherSecret,
        ],
      }),
    });
    const worker = env.inbox.startWorker();
    await env.post("msg_rotation", { type: "t" });
    await until(() => app.requests.length === 1, 10_000, "the forward");
    await worker.stop();
    const request = app.requests[0]!;
    expect(request.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(() =>
      new Webhook(destinationSecret).verify(request.body, request.headers),
    ).not.toThrow();
    expect(() => new Webhook(otherSecret).verify(request.body, request.headers)).not.toThrow();
    expect(() => new Webhook(expired).verify(request.body, request.headers)).toThrow();
  });
});
