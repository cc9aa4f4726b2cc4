import { describe, expect, it } from "vitest";
import { silentLogger } from "../log.ts";
import type { ClaimedDelivery, ClaimInput, QueueStore } from "../store/queue-types.ts";
import { MAX_PREFETCH, prefetchSize, startClaimLoop } from "./claim-loop.ts";
import { createInFlight } from "./in-flight.ts";

describe("prefetchSize", () => {
  it("claims ahead what the slots start within the horizon, bounded, and nothing unmeasured", () => {
    expect(prefetchSize(10, 0, 30_000)).toBe(0);
    expect(prefetchSize(10, 2_000, 30_000)).toBe(0);
    expect(prefetchSize(10, 20, 30_000)).toBe(50);
    expect(prefetchSize(10, 0.1, 30_000)).toBe(MAX_PREFETCH);
    // A 500 ms lease: the horizon shrinks to 50 ms.
    expect(prefetchSize(10, 20, 500)).toBe(25);
  });
});

const delivery = (n: number, leaseExpiresAt: number) =>
  ({ id: `dlv_${n}`, target: "t", leaseExpiresAt }) as unknown as ClaimedDelivery;

/** A store whose due deliveries are 1…`total`, claimed in order. */
function fakeStore(total: number, leaseExpiresAt: () => number) {
  let next = 1;
  const asked: number[] = [];
  const released: string[] = [];
  const store = {
    async claimDeliveries(input: ClaimInput) {
      asked.push(input.limit);
      const claimed: ClaimedDelivery[] = [];
      while (claimed.length < input.limit && next <= total)
        claimed.push(delivery(next++, leaseExpiresAt()));
      return claimed;
    },
    async releaseDeliveries(_worker: string, ids: readonly string[]) {
      released.push(...ids);
      return ids.length;
    },
    async nextDueAt() {
      return next <= total ? 0 : null;
    },
  } as unknown as QueueStore;
  return { store, asked, released };
}

/** A claim loop over `store` whose `run` records each start and holds a slot until ended. */
function loopOver(store: QueueStore, concurrency: number, queued = createInFlight()) {
  const inFlight = createInFlight();
  const started: string[] = [];
  const loop = startClaimLoop({
    store,
    workerId: "w",
    concurrency,
    leases: {
      defaultMs: 30_000,
      targetLeaseMs: {},
      heartbeatMs: 10_000,
      rescueEveryMs: 15_000,
      of: () => 30_000,
    },
    pollIntervalMs: 60_000,
    now: Date.now,
    inFlight,
    queued,
    finishing: createInFlight(),
    run: (d) => {
      started.push(d.id);
      inFlight.add({ delivery: d, abort: new AbortController(), leaseMs: 30_000 });
    },
    log: silentLogger(),
  });
  /** The delivery's slot frees after `ms`. */
  const end = (id: string, ms: number) => {
    inFlight.delete(id);
    loop.ended(ms);
  };
  return { loop, started, end };
}

describe("claim loop prefetch", () => {
  it("claims ahead once deliveries are measured fast, starts the queue as slots free, never a lost one, and hands the rest back at stop", async () => {
    const fake = fakeStore(40, () => Date.now() + 30_000);
    const queued = createInFlight();
    const { loop, started, end: endAfter } = loopOver(fake.store, 2, queued);
    // 10 ms each: 2 slots × 100 ms / 10 ms = 20 ahead.
    const end = (id: string) => endAfter(id, 10);
    loop.begin();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fake.asked).toEqual([2]);
    expect(started).toEqual(["dlv_1", "dlv_2"]);

    end("dlv_1");
    await new Promise((resolve) => setTimeout(resolve, 20));
    // One free slot + 4 ahead (twice the last claim's 2, under the 20 measured), then 6 more to
    // top the queue up to 10 (twice the last claim's 5): dlv_3 starts, dlv_4…dlv_13 wait.
    expect(fake.asked).toEqual([2, 5, 6]);
    expect(started).toEqual(["dlv_1", "dlv_2", "dlv_3"]);
    expect(queued.size).toBe(10);

    // The heartbeat found dlv_4's lease gone: it is skipped, never started nor handed back.
    queued.get("dlv_4")?.abort.abort(new Error("lease lost"));
    end("dlv_2");
    expect(started).toEqual(["dlv_1", "dlv_2", "dlv_3", "dlv_5"]);

    await loop.stop();
    expect(fake.released).toEqual(Array.from({ length: 8 }, (_, i) => `dlv_${i + 6}`));
    expect(queued.size).toBe(0);
  });

  it("hands back a queued delivery whose lease as claimed has run out instead of starting it", async () => {
    let expiresAt = Date.now() + 30_000;
    const fake = fakeStore(10, () => expiresAt);
    const { loop, started, end } = loopOver(fake.store, 1);
    loop.begin();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expiresAt = Date.now() - 1;
    end("dlv_1", 50); // 1 slot × 100 ms / 50 ms = 2 ahead
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Every later claim came back with a lease already over (a stalled worker): none started.
    expect(started).toEqual(["dlv_1"]);
    await loop.stop();
    expect([...fake.released].sort()).toEqual(
      Array.from({ length: 9 }, (_, i) => `dlv_${i + 2}`).sort(),
    );
  });
});
