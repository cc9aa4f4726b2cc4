// The event-stream hub's priming read: what was stored before the first listener subscribed is
// never sent, and an event accepted after it subscribed is sent even when it was committed
// before the priming read's query ran (a loaded machine delays that read).
import { expect, it } from "vitest";
import type { AdminHost } from "../../src/admin/admin-host.ts";
import { eventStreamHub, type StreamedEvent } from "../../src/admin/event-stream-hub.ts";
import { onCleanup } from "../helpers/cleanups.ts";
import { manualClock, processingInbox, until } from "../helpers/processing.ts";

it("sends an event accepted after the first subscribe but committed before the priming read", async () => {
  const clock = manualClock(1_800_000_000_000);
  const env = processingInbox({}, { now: clock.now });
  onCleanup(() => env.cleanup());
  const before = await env.post("msg_before", { type: "t" });

  // The hub's host: the inbox's store and clock, with `ready` held until the test lets it go,
  // so the priming read runs only after the next accept committed.
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const host = {
    config: { admin: { authLimit: 10 }, http: { trustedProxies: [] } },
    now: clock.now,
    ready: () => held,
    operations: { store: env.inbox.store },
    metrics: null,
  } as unknown as AdminHost;
  const hub = eventStreamHub(host);
  onCleanup(async () => hub.close());
  const delivered: StreamedEvent[] = [];
  clock.advance(1_000);
  hub.subscribe({
    filter: {},
    deliver: (event) => delivered.push(event),
    heartbeat: () => undefined,
    close: () => undefined,
  });

  clock.advance(1_000);
  const after = await env.post("msg_after", { type: "t" });
  release();
  await hub.primed();
  hub.wake();
  await until(() => delivered.length > 0, 10_000, "the event accepted after subscribing");
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(delivered.map((event) => event.id)).toEqual([after.eventId]);
  expect(delivered.map((event) => event.id)).not.toContain(before.eventId);
});
