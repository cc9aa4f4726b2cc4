import { afterEach, describe, expect, it } from "vitest";
import { processingInbox } from "../../test/helpers/processing.ts";
import { storeFactories } from "../../test/helpers/stores.ts";
import type { HandlerEvent } from "../handlers/types.ts";
import { silentLogger } from "../log.ts";
import type { QueueStore } from "../store/queue-types.ts";
import { startWorker } from "./worker.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A promise with its resolve, to let the test order the worker's steps. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

// The bug this pins (seen on PostgreSQL as idle() resolving with 56 of 1,000 deliveries open):
// the worker asked the store for its next due time, and while that query ran, its last in-flight
// delivery completed and woke the next delivery of its ordering key (blocked → pending). The
// answer ("nothing pending") predated that completion, yet the worker checked "nothing in
// flight" after it, and so declared itself idle with the woken delivery unrun. Here the store's
// answer is held back until the completion has landed, which makes the interleaving certain.
describe.each(storeFactories())("worker.idle() ($name)", ({ open }) => {
  it("does not resolve on a due-time answer older than a completion that woke the next delivery of its key", async () => {
    const store = await open();
    cleanups.push(() => store.cleanup());
    const firstStarted = gate();
    const releaseFirst = gate();
    const calls: number[] = [];
    const env = processingInbox({
      store: store.url,
      handlers: {
        "std:*": async (event: HandlerEvent<{ seq: number }>) => {
          if (event.payload.seq === 1) {
            firstStarted.open();
            await releaseFirst.opened;
          }
          calls.push(event.payload.seq);
        },
      },
    });
    cleanups.push(env.cleanup);
    await env.post("msg_idle_1", { type: "tick", key: "k", seq: 1 });
    await env.post("msg_idle_2", { type: "tick", key: "k", seq: 2 });

    const real = env.inbox.store;
    const firstCompleted = gate();
    let heldBack = false;
    const wrapped: QueueStore = Object.create(real, {
      completeDelivery: {
        value: async (input: Parameters<QueueStore["completeDelivery"]>[0]) => {
          await real.completeDelivery(input);
          firstCompleted.open();
        },
      },
      nextDueAt: {
        value: async () => {
          const answer = await real.nextDueAt();
          if (!heldBack) {
            // The claim leased seq 1 and parked seq 2 behind it, so the store says "nothing
            // due". Before this answer reaches the worker, seq 1 completes (waking seq 2) and
            // the worker forgets it (a macrotask later, its bookkeeping has run).
            heldBack = true;
            await firstStarted.opened;
            releaseFirst.open();
            await firstCompleted.opened;
            await new Promise((resolve) => setImmediate(resolve));
          }
          return answer;
        },
      },
    });
    const worker = startWorker({
      store: wrapped,
      handlers: env.inbox.config.handlers,
      logger: silentLogger(),
      concurrency: 2,
      leaseMs: 30_000,
      pollIntervalMs: 60_000,
    });
    cleanups.push(async () => void (await worker.stop()));
    await worker.idle();
    expect(calls).toEqual([1, 2]);
    expect(worker.stats()).toMatchObject({ done: 2, retry: 0, dead: 0 });
    expect(await store.count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'")).toBe(2);
  });
});
