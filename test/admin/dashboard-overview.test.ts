import { afterEach, describe, expect, it } from "vitest";
import { PermanentError } from "../../src/handlers/errors.ts";
import { buildOverview } from "../../src/operations/dashboard.ts";
import { manualClock, processingInbox } from "../helpers/processing.ts";
import { type StoreFactory, storeFactories } from "../helpers/stores.ts";

// The dashboard overview against what the test did, on every store: receipts per minute
// (received, duplicates, rejected by reason), failing and dead deliveries per source and target,
// the oldest unprocessed age, and search by dedup key.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(factory: StoreFactory) {
  const store = await factory.open();
  cleanups.push(() => store.cleanup());
  // At a minute's start, so the minutes the test steps through are known.
  const clock = manualClock(Math.floor(Date.now() / 60_000) * 60_000);
  const env = processingInbox(
    {
      store: store.url,
      handlers: {
        "std:ok": async () => {},
        "std:fail": async () => {
          throw new PermanentError("refused for good");
        },
        "std:later": async () => {
          throw new Error("try again in an hour");
        },
      },
      retry: { schedule: ["1h"], jitter: "none" },
      worker: { pollInterval: "20ms", lease: "30s" },
    },
    { now: clock.now },
  );
  cleanups.push(env.cleanup);
  return { env, clock };
}

describe.each(storeFactories())("dashboard overview ($name)", (factory) => {
  it("counts exactly what arrived and what waits, per minute, source and target", async () => {
    const { env, clock } = await setup(factory);
    const worker = env.inbox.startWorker();
    const first = await env.post("msg_ok", { type: "ok" });
    await env.post("msg_ok", { type: "ok" });
    await env.post("msg_ok", { type: "ok" });
    await env.post("msg_later", { type: "later" });
    clock.advance(60_000);
    await env.post("msg_fail", { type: "fail" });
    expect(await env.postForged("msg_forged", { type: "ok" })).toBe(401);
    await worker.idle();
    await worker.stop();
    clock.advance(30_000);

    const overview = await buildOverview(env.inbox, 10);
    expect(overview.series.minute.length).toBe(10);
    // Received = new + duplicate receipts; the last two minutes hold everything.
    expect(overview.series.received.slice(-2)).toEqual([4, 1]);
    expect(overview.series.duplicates.slice(-2)).toEqual([2, 0]);
    expect(overview.series.rejected.slice(-2)).toEqual([0, 1]);
    expect(overview.series.received.slice(0, -2).every((n) => n === 0)).toBe(true);
    expect(overview.totals).toEqual({
      received: 5,
      duplicates: 2,
      rejected: 1,
      duplicateRate: 0.4,
    });
    expect(overview.sources).toEqual([{ source: "std", received: 5, duplicates: 2, rejected: 1 }]);
    expect(overview.rejectedByReason).toEqual([{ code: "HOOKINBOX_SIGNATURE_MISMATCH", count: 1 }]);
    // The same rejections per minute, one list per reason (the forged request, last minute).
    expect(overview.series.rejectedByReason).toEqual([
      { code: "HOOKINBOX_SIGNATURE_MISMATCH", counts: [0, 0, 0, 0, 0, 0, 0, 0, 0, 1] },
    ]);
    expect(overview.targets).toEqual([
      {
        source: "std",
        target: "std:fail",
        pending: 0,
        blocked: 0,
        running: 0,
        failing: 0,
        dead: 1,
        oldestAgeSeconds: 0,
      },
      {
        source: "std",
        target: "std:later",
        pending: 1,
        blocked: 0,
        running: 0,
        failing: 1,
        dead: 0,
        oldestAgeSeconds: 90,
      },
    ]);
    expect(overview.oldestUnprocessedAgeSeconds).toBe(90);
    expect(overview.heldEffects).toBe(0);

    // A window that starts after everything holds none of it.
    clock.advance(20 * 60_000);
    const later = await buildOverview(env.inbox, 10);
    expect(later.totals).toEqual({
      received: 0,
      duplicates: 0,
      rejected: 0,
      duplicateRate: 0,
    });
    expect(later.series.rejectedByReason).toEqual([]);

    // Search by dedup key (the provider's event id), in every source or one.
    expect(await env.inbox.store.eventIdsByDedupKey(["std"], "msg_ok")).toEqual([first.eventId]);
    expect(await env.inbox.store.eventIdsByDedupKey(["std", "other"], "msg_ok")).toEqual([
      first.eventId,
    ]);
    expect(await env.inbox.store.eventIdsByDedupKey(["other"], "msg_ok")).toEqual([]);
    expect(await env.inbox.store.eventIdsByDedupKey([], "msg_ok")).toEqual([]);
  });
});
