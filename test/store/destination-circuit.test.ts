// The circuit breaker's store operations (DestinationStore in src/store/forward-types.ts) on every
// store: the window buckets and the down run move in one atomic update, a circuit opens once for
// processes that saw the same failures, a half-open circuit hands out exactly `limit` trials
// across callers, closing wakes exactly the deliveries marked as waiting for it, and a deferral
// or a retry carries its mark. What the counters mean is src/forward/circuit-policy.ts's.
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.ts";
import type { Store } from "../../src/store/types.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";
import { acceptInput } from "./conformance.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const T = acceptInput().receivedAt;
const W = 30_000;
const healthy = (n: number) => ({ calls: n, failures: 0, downs: 0, brokeRun: true });
const downs = (n: number) => ({ calls: n, failures: n, downs: n, brokeRun: false });

describe.each(storeFactories())("destination circuit in the store ($name)", (factory) => {
  async function open(): Promise<{ store: Store; db: TestStore }> {
    const db = await factory.open();
    const store = openStore(db.url);
    await store.migrate();
    cleanups.push(async () => {
      await store.close();
      await db.cleanup();
    });
    await store.ensureDestinations(["app", "other"]);
    return { store, db };
  }

  /** `n` events routed to `target`, claimed by `worker`. */
  async function claimed(store: Store, target: string, n: number, tag: string, worker = "w1") {
    for (let i = 0; i < n; i++)
      await store.accept(
        acceptInput({
          identity: { dedupKey: `${tag}_${i}`, orderingKey: null },
          targets: [target],
        }),
      );
    return store.claimDeliveries({ workerId: worker, limit: n, leaseMs: 60_000, now: T + 1 });
  }

  const marks = (db: TestStore) =>
    db.rows<{ id: string; target: string; run_at: number; attempts: number; wait: number }>(
      `SELECT id, target, run_at, attempts, CASE WHEN circuit_wait THEN 1 ELSE 0 END AS wait
       FROM deliveries ORDER BY id`,
    );

  it("counts calls in the window's bucket, moves buckets on, and keeps the down run", async () => {
    const { store } = await open();
    const b0 = 1_000 * W;
    let row = await store.recordCalls("app", downs(2), b0, W);
    expect(row?.window).toEqual({
      start: b0,
      calls: 2,
      failures: 2,
      prevCalls: 0,
      prevFailures: 0,
    });
    expect(row?.failures).toBe(2);
    row = await store.recordCalls(
      "app",
      { calls: 3, failures: 1, downs: 1, brokeRun: true },
      b0,
      W,
    );
    expect(row?.window).toEqual({
      start: b0,
      calls: 5,
      failures: 3,
      prevCalls: 0,
      prevFailures: 0,
    });
    expect(row?.failures).toBe(1); // the run started over, then one more down
    // The next bucket: the current one becomes the previous one.
    row = await store.recordCalls("app", downs(1), b0 + W, W);
    expect(row?.window).toEqual({
      start: b0 + W,
      calls: 1,
      failures: 1,
      prevCalls: 5,
      prevFailures: 3,
    });
    expect(row?.failures).toBe(2);
    // A late writer's older bucket counts in the stored one.
    row = await store.recordCalls("app", healthy(1), b0, W);
    expect(row?.window).toEqual({
      start: b0 + W,
      calls: 2,
      failures: 1,
      prevCalls: 5,
      prevFailures: 3,
    });
    expect(row?.failures).toBe(0);
    // Two buckets on: both start empty.
    row = await store.recordCalls("app", healthy(4), b0 + 3 * W, W);
    expect(row?.window).toEqual({
      start: b0 + 3 * W,
      calls: 4,
      failures: 0,
      prevCalls: 0,
      prevFailures: 0,
    });
    // Concurrent writers: every call counted.
    await Promise.all(
      Array.from({ length: 20 }, () => store.recordCalls("app", downs(1), b0 + 3 * W, W)),
    );
    row = (await store.listDestinationStates()).find((r) => r.name === "app")!;
    expect(row.window.calls).toBe(24);
    expect(row.failures).toBe(20);
    expect(
      (await store.listDestinationStates()).find((r) => r.name === "other")?.window.calls,
    ).toBe(0);
  });

  it("opens once for every process that saw the same failures; reopens only its own period", async () => {
    const { store } = await open();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => store.openCircuit("app", T + 5_000, null)),
    );
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(results.find((r) => r !== null)?.openUntil).toBe(T + 5_000);
    // A trial of another period cannot reopen it.
    expect(await store.openCircuit("app", T + 9_000, T + 1)).toBeNull();
    const reopened = await store.openCircuit("app", T + 12_000, T + 5_000);
    expect(reopened?.openUntil).toBe(T + 12_000);
    expect(reopened?.trials).toEqual({ taken: 0, passed: 0, until: null });
  });

  it("a half-open circuit hands out exactly `limit` trials across callers; unreported ones lapse, passes stay", async () => {
    const { store } = await open();
    const openUntil = T + 5_000;
    await store.openCircuit("app", openUntil, null);
    // Still open: no trial.
    expect(await store.takeTrial("app", openUntil, openUntil - 1, 3, openUntil + 20_000)).toEqual({
      taken: false,
      openUntil,
    });
    const at = openUntil + 10;
    const takes = await Promise.all(
      Array.from({ length: 10 }, () => store.takeTrial("app", openUntil, at, 3, at + 20_000)),
    );
    expect(takes.filter((t) => t.taken)).toHaveLength(3);
    expect(takes.every((t) => t.openUntil === openUntil)).toBe(true);
    // One passes, one gives its slot back (nothing learned): one slot is free again.
    expect((await store.endTrial("app", openUntil, true))?.trials).toEqual({
      taken: 3,
      passed: 1,
      until: at + 20_000,
    });
    expect((await store.endTrial("app", openUntil, false))?.trials.taken).toBe(2);
    expect((await store.takeTrial("app", openUntil, at + 5, 3, at + 20_000)).taken).toBe(true);
    expect((await store.takeTrial("app", openUntil, at + 5, 3, at + 20_000)).taken).toBe(false);
    // Past every hold: the unreported trials lapse, the pass is kept.
    const later = at + 20_001;
    expect((await store.takeTrial("app", openUntil, later, 3, later + 20_000)).taken).toBe(true);
    expect((await store.takeTrial("app", openUntil, later, 3, later + 20_000)).taken).toBe(true);
    expect((await store.takeTrial("app", openUntil, later, 3, later + 20_000)).taken).toBe(false);
    const row = (await store.listDestinationStates()).find((r) => r.name === "app")!;
    expect(row.trials).toEqual({ taken: 3, passed: 1, until: later + 20_000 });
    // Another period's trial report changes nothing; closed or reopened, takeTrial says so.
    expect(await store.endTrial("app", openUntil + 1, true)).toBeNull();
    await store.openCircuit("app", later + 5_000, openUntil);
    expect(await store.takeTrial("app", openUntil, later, 3, later + 20_000)).toEqual({
      taken: false,
      openUntil: later + 5_000,
    });
  });

  it("closing wakes exactly the marked pending deliveries of the destination and starts the counters over", async () => {
    const { store, db } = await open();
    const app = await claimed(store, "app", 6, "a");
    const other = await claimed(store, "other", 1, "o");
    const [p1, p2, cut, down, backoff, gone] = app.map((d) => d.id);
    await store.openCircuit("app", T + 10, null);
    await store.openCircuit("other", T + 10, null);
    // Postponed by the breaker (marked), deferred by a limit (not marked).
    expect(await store.deferDeliveries("w1", [p1!, p2!], T + 50_000, T + 2, true)).toBe(2);
    expect(await store.deferDeliveries("w1", [cut!], T + 50_000, T + 2)).toBe(1);
    await store.deferDeliveries("w1", [other[0]!.id], T + 50_000, T + 2, true);
    // Retries: after a "down" failure (marked) and after a 503 (not marked); one dead.
    const fail = (id: string, attempt: number, circuitWait: boolean, retryAt: number | null) =>
      store.failDelivery({
        deliveryId: id,
        workerId: "w1",
        attempt,
        now: T + 3,
        error: { message: "x", stack: null },
        retryAt,
        outcome: "error",
        blockKey: false,
        circuitWait,
      });
    const attemptOf = (id: string) => app.find((d) => d.id === id)!.attempt;
    await fail(down!, attemptOf(down!), true, T + 300_000);
    await fail(backoff!, attemptOf(backoff!), false, T + 300_000);
    await fail(gone!, attemptOf(gone!), true, null);
    // Postponements undid their attempt: count and row.
    const before = await marks(db);
    for (const id of [p1, p2, cut]) expect(before.find((r) => r.id === id)?.attempts).toBe(0);
    expect(
      await db.count("SELECT count(*) AS n FROM attempts WHERE delivery_id IN (?, ?, ?)", [
        p1,
        p2,
        cut,
      ]),
    ).toBe(0);
    // A dead letter is not waiting for anything.
    expect(before.filter((r) => r.wait === 1).map((r) => r.id)).toEqual(
      [p1, p2, down, other[0]!.id].sort(),
    );

    await store.recordCalls("app", downs(7), 0, W);
    // Wake two of the waiting ones for free trial slots: earliest first, still marked.
    expect(await store.wakeCircuitWaiting("app", T + 20, 2)).toBe(2);
    const half = await marks(db);
    expect(half.filter((r) => r.run_at === T + 20).map((r) => r.id)).toEqual([p1, p2].sort());
    expect(half.filter((r) => r.wait === 1)).toHaveLength(4);

    expect(await store.closeCircuit("app", T + 9, T + 30)).toBeNull(); // not its period
    expect(await store.closeCircuit("app", T + 10, T + 30)).toBe(3);
    expect(await store.closeCircuit("app", T + 10, T + 30)).toBeNull();
    const after = await marks(db);
    const of = (id: string) => after.find((r) => r.id === id)!;
    // Due at once, unmarked; none pushed later than it was.
    expect(of(p1!)).toMatchObject({ run_at: T + 20, wait: 0 });
    expect(of(p2!)).toMatchObject({ run_at: T + 20, wait: 0 });
    expect(of(down!)).toMatchObject({ run_at: T + 30, wait: 0 });
    // Not marked: their own time. Another destination: untouched.
    expect(of(cut!)).toMatchObject({ run_at: T + 50_000, wait: 0 });
    expect(of(backoff!)).toMatchObject({ run_at: T + 300_000, wait: 0 });
    expect(of(other[0]!.id)).toMatchObject({ run_at: T + 50_000, wait: 1 });
    const row = (await store.listDestinationStates()).find((r) => r.name === "app")!;
    expect(row).toMatchObject({
      openUntil: null,
      failures: 0,
      window: { start: 0, calls: 0, failures: 0, prevCalls: 0, prevFailures: 0 },
      trials: { taken: 0, passed: 0, until: null },
    });
  });

  it("a postponement that lands after the circuit closed is due at once, unmarked", async () => {
    const { store, db } = await open();
    const [d] = await claimed(store, "app", 1, "late");
    // The caller saw the circuit open; it closed before the postponement was written.
    expect(await store.deferDeliveries("w1", [d!.id], T + 50_000, T + 2, true)).toBe(1);
    expect((await marks(db))[0]).toMatchObject({ run_at: T + 2, wait: 0, attempts: 0 });
  });

  it("an operator's resume closes the circuit and unmarks what it wakes", async () => {
    const { store, db } = await open();
    const [d] = await claimed(store, "app", 1, "r");
    await store.openCircuit("app", T + 40_000, null);
    await store.deferDeliveries("w1", [d!.id], T + 50_000, T + 2, true);
    await store.setDestinationState("app", "paused", "x", T + 3);
    const resumed = await store.setDestinationState("app", "active", null, T + 4);
    expect(resumed).toMatchObject({ openUntil: null, failures: 0 });
    expect((await marks(db))[0]).toMatchObject({ run_at: T + 4, wait: 0 });
  });
});
