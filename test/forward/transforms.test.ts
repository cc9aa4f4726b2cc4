import { createHash } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { TransformEvent } from "../../src/forward/transform.ts";
import { replayEvent } from "../../src/operations/replay.ts";
import { onCleanup } from "../helpers/cleanups.ts";
import { processingInbox, until } from "../helpers/processing.ts";
import { storeFactories } from "../helpers/stores.ts";
import {
  destination,
  destinationSecret,
  receiver,
  forwardingInbox as setup,
} from "./forward-env.ts";

// Transforms (docs/forwarding.md#transformations) against a real store and a loopback receiver:
// the route's transform runs, then the destination's; what is sent is signed and recorded by size
// and digest; null drops the event (done, attempt filtered); a throw, a hang or a bad shape fails
// the attempt with its own code and retries; a replay runs the transform configured now.

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe.each(storeFactories())("transforms ($name)", (factory) => {
  it("reshapes: route then destination transform; signed over the new body; raw event unchanged; attempt records size and digest", async () => {
    const app = await receiver();
    const seen: TransformEvent[] = [];
    const env = await setup(
      factory,
      {
        app: destination(app.url, {
          headers: { "x-static": "static" },
          transform: (event: TransformEvent) => {
            seen.push(event);
            return { headers: { ...event.headers, "x-saw-route": event.headers["x-shape"] ?? "" } };
          },
        }),
      },
      {
        routes: [
          {
            from: "std",
            to: "app",
            transform: (event: TransformEvent) => ({
              body: { kind: event.type, amount: (event.json as { n: number }).n * 100 },
              headers: { "x-shape": "v1" },
            }),
          },
        ],
      },
    );
    const worker = env.inbox.startWorker();
    const payload = { type: "order.paid", n: 7, text: "é ✓" };
    const { eventId } = await env.post("msg_reshape", payload);
    await until(async () => (await env.inbox.store.getEvent(eventId))?.status === "done");
    await worker.stop();
    expect(app.requests).toHaveLength(1);
    const request = app.requests[0]!;
    const sent = '{"kind":"order.paid","amount":700}';
    expect(request.body.toString("utf8")).toBe(sent);
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["x-shape"]).toBe("v1");
    expect(request.headers["x-saw-route"]).toBe("v1");
    expect(request.headers["x-static"]).toBe("static");
    expect(request.headers["webhook-id"]).toBe(`${eventId}:app`);
    expect(() =>
      new Webhook(destinationSecret).verify(request.body, request.headers),
    ).not.toThrow();
    // The destination's transform got the route's output, frozen.
    expect(seen[0]!.body).toBe(sent);
    expect(Object.isFrozen(seen[0]!.json)).toBe(true);
    expect(seen[0]!.receivedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const event = await env.inbox.store.getEvent(eventId);
    expect(Buffer.from(event!.body).toString("utf8")).toBe(JSON.stringify(payload));
    const attempt = event!.deliveries[0]!.attemptLog![0]!;
    expect(attempt.outcome).toBe("success");
    expect(attempt.response?.request).toEqual({
      bytes: Buffer.byteLength(sent),
      sha256: sha256(Buffer.from(sent)),
    });
    expect(attempt.response?.filtered).toBeUndefined();
  });

  it("drops: null ends the delivery done with a filtered attempt and nothing sent", async () => {
    const app = await receiver();
    const env = await setup(factory, {
      app: destination(app.url, {
        transform: (event: TransformEvent) =>
          (event.json as { drop?: boolean }).drop ? null : { body: event.body },
      }),
    });
    const worker = env.inbox.startWorker();
    const ids = [];
    for (const [i, drop] of [false, true, false, true, true].entries())
      ids.push((await env.post(`msg_drop_${i}`, { type: "t", drop })).eventId);
    await until(
      async () =>
        (await env.store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")) === 5,
      10_000,
      "every delivery done",
    );
    await worker.stop();
    expect(app.requests).toHaveLength(2);
    const dropped = await env.inbox.store.getEvent(ids[1]!);
    expect(dropped!.status).toBe("done");
    const attempt = dropped!.deliveries[0]!.attemptLog![0]!;
    expect(attempt.outcome).toBe("success");
    expect(attempt.response).toMatchObject({ status: null, filtered: true });
    expect(attempt.response?.request).toBeUndefined();
    expect(await env.store.count("SELECT count(*) AS n FROM attempts WHERE filtered = true")).toBe(
      3,
    );
  });

  it("a throw, a hang past transformTimeout and a bad shape each fail the attempt with their code, then the retry sends", async () => {
    const app = await receiver();
    let calls = 0;
    const env = await setup(factory, {
      app: destination(app.url, {
        transformTimeout: "100ms",
        transform: (event: TransformEvent) => {
          calls++;
          if (calls === 1) throw new TypeError("no amount");
          if (calls === 2) return new Promise(() => undefined);
          if (calls === 3) return { headers: { "content-length": "1" } };
          if (calls === 4) return undefined as never;
          return { body: `ok ${event.id}` };
        },
      }),
    });
    const worker = env.inbox.startWorker();
    const { eventId } = await env.post("msg_fail", { type: "t" });
    await until(async () => (await env.inbox.store.getEvent(eventId))?.status === "done");
    await worker.stop();
    expect(app.requests.map((r) => r.body.toString())).toEqual([`ok ${eventId}`]);
    expect(app.requests[0]!.headers["hookinbox-attempt"]).toBe("5");
    const log = (await env.inbox.store.getEvent(eventId))!.deliveries[0]!.attemptLog!;
    expect(log.map((a) => a.outcome)).toEqual(["error", "error", "error", "error", "success"]);
    expect(log[0]!.errorMessage).toMatch(
      /^HOOKINBOX_TRANSFORM_FAILED: .*destinations\.app\.transform threw TypeError: no amount/,
    );
    expect(log[1]!.errorMessage).toMatch(/^HOOKINBOX_TRANSFORM_TIMEOUT: .*100 ms/);
    expect(log[2]!.errorMessage).toMatch(/^HOOKINBOX_TRANSFORM_INVALID: .*content-length/);
    expect(log[3]!.errorMessage).toMatch(/^HOOKINBOX_TRANSFORM_INVALID: .*neither null nor/);
    // Nothing was sent on a failed transform: no response recorded.
    expect(log.slice(0, 4).every((a) => a.response === undefined)).toBe(true);
  });

  it("a replay runs the transform configured now (a new config on the same store)", async () => {
    const app = await receiver();
    const store = await factory.open();
    onCleanup(() => store.cleanup());
    const config = (version: string) => ({
      store: store.url,
      destinations: {
        app: destination(app.url, {
          transform: (event: TransformEvent) => ({ body: { version, id: event.id } }),
        }),
      },
      routes: [{ from: "std", to: "app" }],
      worker: { pollInterval: "50ms" },
    });
    const first = processingInbox(config("v1"));
    const worker = first.inbox.startWorker();
    const { eventId } = await first.post("msg_replay", { type: "t" });
    await until(() => app.requests.length === 1, 10_000, "the first send");
    await worker.stop();
    await first.cleanup();
    const second = processingInbox(config("v2"));
    onCleanup(second.cleanup);
    const again = second.inbox.startWorker();
    await replayEvent.run(second.inbox.operations, { id: eventId, destination: ["app"] });
    await until(() => app.requests.length === 2, 10_000, "the replay");
    await again.stop();
    expect(app.requests.map((r) => JSON.parse(r.body.toString()))).toEqual([
      { version: "v1", id: eventId },
      { version: "v2", id: eventId },
    ]);
    expect(app.requests[1]!.headers["hookinbox-replay"]).toBe("true");
    expect(() =>
      new Webhook(destinationSecret).verify(app.requests[1]!.body, app.requests[1]!.headers),
    ).not.toThrow();
  });
});
