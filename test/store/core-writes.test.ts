// The writes core implements once over each driver's `execute` primitive (src/store/core/
// alert-writes.ts, circuit-writes.ts), on every store variant, SQLite's writer thread included:
// the alert outbox's claim, settle and prune; the dead-letter mark; destinations ensured once;
// a rate window that hands out exactly `limit` slots to concurrent callers; and rejected
// receipts pruned oldest first, never an accepted one.
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.ts";
import type { Store } from "../../src/store/types.ts";
import { storeVariants } from "../helpers/stores.ts";
import { acceptInput } from "./conformance.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const T = acceptInput().receivedAt;

describe.each(storeVariants())("core writes on $name", ({ open, writer }) => {
  async function fresh(): Promise<Store> {
    const db = await open();
    const store = openStore(db.url, writer ? { writer } : {});
    await store.migrate();
    cleanups.push(async () => {
      await store.close();
      await db.cleanup();
    });
    return store;
  }

  it("claims due alerts once with a lease, settles and prunes them", async () => {
    const store = await fresh();
    for (const condition of ["c:one", "c:two", "c:three"]) {
      await store.recordAlerts([{ condition, kind: "test", payload: { condition } }], {
        now: T,
        windowMs: 0,
      });
    }
    const claimed = await store.claimDueAlerts(T, 2, 60_000);
    expect(claimed.map((a) => a.condition)).toEqual(["c:one", "c:two"]);
    expect(claimed[0]).toMatchObject({ kind: "test", count: 1, createdAt: T, lastAt: T });
    expect(claimed[0]?.attempts).toBe(0);
    // Leased: only the third is due until the lease ends.
    expect((await store.claimDueAlerts(T, 10, 60_000)).map((a) => a.condition)).toEqual([
      "c:three",
    ]);
    await store.settleAlert(claimed[0]!.id, { delivered: true, now: T + 1 });
    await store.settleAlert(claimed[1]!.id, { delivered: false, retryAt: T + 5, error: "503" });
    const retried = await store.claimDueAlerts(T + 5, 10, 60_000);
    expect(retried.map((a) => [a.condition, a.attempts])).toEqual([["c:two", 1]]);
    expect(await store.pruneAlerts(T + 2, 10)).toBe(1);
    expect(await store.pruneAlerts(T + 2, 10)).toBe(0);
  });

  it("hands out exactly `limit` rate slots per window to concurrent callers", async () => {
    const store = await fresh();
    await store.ensureDestinations(["app", "app", "other"]);
    await store.ensureDestinations(["app"]);
    expect((await store.listDestinationStates()).map((d) => d.name)).toEqual(["app", "other"]);
    const window = 1_000 * 60_000;
    const taken = await Promise.all(
      Array.from({ length: 10 }, () => store.takeRateSlot("app", window, 3)),
    );
    expect(taken.filter(Boolean)).toHaveLength(3);
    expect(await store.takeRateSlot("other", window, 3)).toBe(true);
    expect(await store.takeRateSlot("app", window + 60_000, 3)).toBe(true);
    expect(await store.takeRateSlot("missing", window, 3)).toBe(false);
  });

  it("marks dead letters alerted once, and only dead ones", async () => {
    const store = await fresh();
    await store.accept(acceptInput({ targets: ["app"] }));
    const [delivery] = await store.claimDeliveries({
      workerId: "w1",
      limit: 1,
      leaseMs: 60_000,
      now: T + 1,
    });
    await store.markAlerted([delivery!.id], T + 2); // running: not marked
    await store.failDelivery({
      deliveryId: delivery!.id,
      workerId: "w1",
      attempt: delivery!.attempt,
      error: { message: "boom", stack: null },
      retryAt: null,
      outcome: "error",
      blockKey: false,
      now: T + 3,
    });
    expect((await store.pendingDeadLetterAlerts(10)).map((a) => a.deliveryId)).toEqual([
      delivery!.id,
    ]);
    await store.markAlerted([], T + 4);
    await store.markAlerted([delivery!.id, "dlv_missing"], T + 4);
    expect(await store.pendingDeadLetterAlerts(10)).toEqual([]);
  });

  it("prunes rejected receipts oldest first, in batches, never an accepted receipt", async () => {
    const store = await fresh();
    await store.accept(acceptInput({ receivedAt: T - 10_000 }));
    for (let i = 0; i < 5; i++) {
      await store.recordRejection({
        source: "stripe",
        receivedAt: T - 5_000 + i,
        remoteAddress: null,
        status: 401,
        code: "HOOKINBOX_SIGNATURE_MISMATCH",
        size: 10,
        headerNames: ["content-type"],
      });
    }
    expect(await store.pruneRejections(T - 5_000 + 3, 2)).toBe(2);
    expect(await store.pruneRejections(T - 5_000 + 3, 2)).toBe(1);
    expect(await store.pruneRejections(T - 5_000 + 3, 2)).toBe(0);
    expect(await store.pruneRejections(T + 1, 10)).toBe(2);
    const left = await store.listReceipts({ limit: 50 });
    expect(left.items.map((r) => r.eventId === null)).toEqual([false]);
  });
});
