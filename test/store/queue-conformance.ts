import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isHookinboxError } from "../../src/errors.ts";
import type { CompleteInput } from "../../src/store/queue-types.ts";
import type { Store } from "../../src/store/types.ts";
import { acceptInput, type OpenedStore } from "./conformance.ts";

/** The user's own SQL in the store's dialect, for `ctx.transaction` checks. */
export interface UserSql {
  readonly createTable: string;
  /** Inserts one row with one text parameter. */
  readonly insert: string;
  readonly count: string;
}

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const lease = 1000;

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

/**
 * The processing half of the Store contract (deliveries, leases, ordering keys, retries, dead
 * letters, replay, effects), with time passed in explicitly so boundaries are exact. Every store
 * runs it.
 *
 * @example
 * ```ts
 * runQueueConformance("sqlite", openFreshSqlite, sqliteUserSql);
 * ```
 */
export function runQueueConformance(
  name: string,
  open: () => Promise<OpenedStore>,
  userSql: UserSql,
): void {
  describe(`Queue conformance: ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await open());
    });
    afterEach(async () => {
      await cleanup();
    });

    let seq = 0;
    const accept = (
      options: {
        key?: string | null;
        version?: number | null;
        targets?: string[];
        at?: number;
      } = {},
    ) =>
      store.accept(
        acceptInput({
          receivedAt: options.at ?? T0,
          identity: {
            dedupKey: `evt_${++seq}`,
            orderingKey: options.key === undefined ? null : options.key,
            version: options.version === undefined ? null : options.version,
          },
          targets: options.targets ?? ["t"],
        }),
      );
    const claim = (workerId: string, limit = 10, now = T0) =>
      store.claimDeliveries({ workerId, limit, leaseMs: lease, now });
    const done = (
      d: { id: string; attempt: number },
      workerId: string,
      now = T0,
    ): CompleteInput => ({
      deliveryId: d.id,
      workerId,
      attempt: d.attempt,
      now,
    });

    it("creates one delivery per target for a new event, none for a duplicate, none when routed nowhere", async () => {
      const first = await accept({ targets: ["a", "b"] });
      expect(first.deliveries).toBe(2);
      const again = await store.accept(
        acceptInput({ receivedAt: T0, identity: { dedupKey: `evt_${seq}` }, targets: ["a", "b"] }),
      );
      expect(again).toMatchObject({ duplicate: true, deliveries: 0 });
      const ignored = await accept({ targets: [] });
      expect((await store.getEvent(ignored.eventId))!.status).toBe("ignored");
      expect((await store.getEvent(first.eventId))!.status).toBe("pending");
      expect((await store.listDeliveries({ limit: 50 })).items).toHaveLength(2);
    });

    it("claims due deliveries once, with a lease and an attempt record", async () => {
      await accept();
      await accept();
      const a = await claim("w1", 10);
      expect(a.map((d) => d.attempt)).toEqual([1, 1]);
      expect(a[0]).toMatchObject({
        target: "t",
        leaseExpiresAt: T0 + lease,
        isReplay: false,
        budgetAttempt: 1,
      });
      expect(new TextDecoder().decode(a[0]!.body)).toContain("evt_1");
      expect(await claim("w2", 10)).toEqual([]);
      const detail = await store.getEvent(a[0]!.eventId);
      expect(detail!.deliveries[0]!.attemptLog).toMatchObject([
        { attempt: 1, workerId: "w1", outcome: "running" },
      ]);
    });

    it("claims only the deliveries of eventIds when given, and counts what is due", async () => {
      const a = await accept({ targets: ["t", "u"] });
      const b = await accept();
      const c = await accept({ at: T0 + 10 });
      expect(await store.countDue({ now: T0 })).toBe(3);
      expect(await store.countDue({ now: T0 + 10 })).toBe(4);
      expect(await store.countDue({ now: T0 + 10, eventIds: [a.eventId, c.eventId] })).toBe(3);
      expect(await store.countDue({ now: T0, eventIds: [c.eventId] })).toBe(0);
      expect(await store.countDue({ now: T0, eventIds: [] })).toBe(0);

      const none = await store.claimDeliveries({
        workerId: "w1",
        limit: 10,
        leaseMs: lease,
        now: T0,
        eventIds: [c.eventId, "evt_missing"],
      });
      expect(none).toEqual([]);
      const some = await store.claimDeliveries({
        workerId: "w1",
        limit: 10,
        leaseMs: lease,
        now: T0 + 10,
        eventIds: [a.eventId, c.eventId],
      });
      expect(some.map((d) => [d.eventId, d.target])).toEqual([
        [a.eventId, "t"],
        [a.eventId, "u"],
        [c.eventId, "t"],
      ]);
      expect(await store.countDue({ now: T0 + 10 })).toBe(1);
      expect(await store.countDue({ now: T0 + 10, eventIds: [a.eventId, c.eventId] })).toBe(0);
      expect((await claim("w2", 10, T0 + 10)).map((d) => d.eventId)).toEqual([b.eventId]);
      expect(await store.countDue({ now: T0 + 10 })).toBe(0);
    });

    it("completes a delivery: done, event done, attempt success", async () => {
      const { eventId } = await accept();
      const [d] = await claim("w1");
      await store.completeDelivery(done(d!, "w1", T0 + 5));
      const event = await store.getEvent(eventId);
      expect(event!.status).toBe("done");
      expect(event!.deliveries[0]).toMatchObject({
        status: "done",
        completedAt: new Date(T0 + 5).toISOString(),
      });
      expect(event!.deliveries[0]!.attemptLog!.map((x) => x.outcome)).toEqual(["success"]);
      expect(await store.nextDueAt()).toBeNull();
    });

    it("commits the handler's SQL with the completion, or neither", async () => {
      const { eventId } = await accept();
      await accept();
      const [d1, d2] = await claim("w1");
      await store.completeDelivery(done(d1!, "w1"), async (tx) => {
        await tx.query(userSql.createTable);
        await tx.query(userSql.insert, ["one"]);
      });
      const failing = await rejectionOf(
        store.completeDelivery(done(d2!, "w1"), async (tx) => {
          await tx.query(userSql.insert, ["two"]);
          throw new Error("handler bug after its insert");
        }),
      );
      expect((failing as Error).message).toBe("handler bug after its insert");
      let rows = 0;
      await accept();
      const [d3] = await claim("w1");
      await store.completeDelivery(done(d3!, "w1"), async (tx) => {
        rows = Number(Object.values((await tx.query(userSql.count)).rows[0]!)[0]);
      });
      expect(rows).toBe(1);
      expect((await store.getEvent(eventId))!.status).toBe("done");
      expect((await store.listDeliveries({ status: "running" })).items.map((d) => d.id)).toEqual([
        d2!.id,
      ]);
    });

    it("rescues a lease only after it expired (valid through its expiry ms)", async () => {
      await accept();
      const [d] = await claim("w1");
      expect(await store.rescueExpiredLeases(T0 + lease - 1)).toBe(0);
      expect(await store.rescueExpiredLeases(T0 + lease)).toBe(0);
      expect(await store.rescueExpiredLeases(T0 + lease + 1)).toBe(1);
      const [again] = await claim("w2", 10, T0 + lease + 1);
      expect(again).toMatchObject({ id: d!.id, attempt: 2, budgetAttempt: 2 });
      // The crashed worker's late completion changes nothing.
      const lost = await rejectionOf(store.completeDelivery(done(d!, "w1")));
      expect(isHookinboxError(lost, "HOOKINBOX_LEASE_LOST")).toBe(true);
      const log = (await store.getEvent(d!.eventId))!.deliveries[0]!.attemptLog!;
      expect(log.map((a) => [a.attempt, a.outcome])).toEqual([
        [1, "lease-expired"],
        [2, "running"],
      ]);
    });

    it("extends leases only for the worker that holds them", async () => {
      await accept();
      const [d] = await claim("w1");
      expect(await store.extendLeases("w2", [d!.id], T0 + 9000)).toEqual([]);
      expect(await store.extendLeases("w1", [d!.id], T0 + 9000)).toEqual([d!.id]);
      expect(await store.rescueExpiredLeases(T0 + 5000)).toBe(0);
    });

    it("releases claimed-but-unstarted deliveries uncounted", async () => {
      await accept();
      const [d] = await claim("w1");
      expect(await store.releaseDeliveries("w1", [d!.id], T0)).toBe(1);
      const [again] = await claim("w2");
      expect(again).toMatchObject({ id: d!.id, attempt: 1 });
    });

    it("schedules a retry at retryAt and dead-letters when retryAt is null", async () => {
      const { eventId } = await accept();
      const [d] = await claim("w1");
      const error = { message: "Error: boom", stack: "Error: boom\n    at x" };
      expect(
        await store.failDelivery({
          ...done(d!, "w1"),
          error,
          retryAt: T0 + 5000,
          outcome: "error",
          blockKey: true,
        }),
      ).toEqual({ dead: false });
      expect(await store.nextDueAt()).toBe(T0 + 5000);
      expect(await claim("w1", 10, T0 + 4999)).toEqual([]);
      const [d2] = await claim("w1", 10, T0 + 5000);
      expect(d2!.attempt).toBe(2);
      expect(
        await store.failDelivery({
          ...done(d2!, "w1"),
          error,
          retryAt: null,
          outcome: "error",
          blockKey: true,
        }),
      ).toEqual({ dead: true });
      const event = await store.getEvent(eventId);
      expect(event!.status).toBe("dead");
      expect(event!.deliveries[0]).toMatchObject({
        status: "dead",
        attempts: 2,
        lastError: "Error: boom",
      });
      expect(event!.deliveries[0]!.attemptLog!.map((a) => a.errorStack)).toEqual([
        error.stack,
        error.stack,
      ]);
      expect(await store.pendingDeadLetterAlerts(10)).toMatchObject([
        { deliveryId: d!.id, eventId, attempts: 2 },
      ]);
      await store.markAlerted([d!.id], T0);
      expect(await store.pendingDeadLetterAlerts(10)).toEqual([]);
      expect((await store.listDeliveries({ status: "dead" })).items.map((x) => x.id)).toEqual([
        d!.id,
      ]);
    });

    it("stores a failure's message and stack capped (core/failure-text.ts)", async () => {
      const { eventId } = await accept();
      const [d] = await claim("w1");
      const error = { message: "m".repeat(2500), stack: "s".repeat(9000) };
      const dead = { retryAt: null, outcome: "error", blockKey: false } as const;
      await store.failDelivery({ ...done(d!, "w1"), error, ...dead });
      const [delivery] = (await store.getEvent(eventId))!.deliveries;
      expect(delivery!.lastError).toBe("m".repeat(2000));
      expect(delivery!.attemptLog!.map((a) => [a.errorMessage, a.errorStack])).toEqual([
        ["m".repeat(2000), "s".repeat(8000)],
      ]);
    });

    it("runs one delivery per target and ordering key at a time, in version order", async () => {
      await accept({ key: "k1", version: 3 });
      await accept({ key: "k1", version: 1 });
      await accept({ key: "k1", version: 2 });
      await accept({ key: "k2", version: 1 });
      await accept({ key: "k1", version: 1, targets: ["other"] });
      const first = await claim("w1", 10);
      expect(first.map((d) => [d.orderingKey, d.version, d.target])).toEqual([
        ["k1", 1, "t"],
        ["k2", 1, "t"],
        ["k1", 1, "other"],
      ]);
      expect(await claim("w1", 10)).toEqual([]);
      await store.completeDelivery(done(first[0]!, "w1"));
      const second = await claim("w1", 10);
      expect(second.map((d) => [d.orderingKey, d.version])).toEqual([["k1", 2]]);
      expect(second[0]!.appliedVersion).toBe(1);
      await store.completeDelivery(done(second[0]!, "w1"));
      const third = await claim("w1", 10);
      expect(third.map((d) => d.version)).toEqual([3]);
    });

    it("keeps a failing head in front of its key until it succeeds", async () => {
      await accept({ key: "k", version: 1 });
      await accept({ key: "k", version: 2 });
      const [head] = await claim("w1");
      await store.failDelivery({
        ...done(head!, "w1"),
        error: { message: "x", stack: null },
        retryAt: T0 + 100,
        outcome: "error",
        blockKey: true,
      });
      expect(await claim("w1", 10, T0 + 50)).toEqual([]);
      const [retried] = await claim("w1", 10, T0 + 100);
      expect(retried!.version).toBe(1);
      await store.completeDelivery(done(retried!, "w1", T0 + 100));
      expect((await claim("w1", 10, T0 + 100)).map((d) => d.version)).toEqual([2]);
    });

    it("a dead head blocks its key (blockKey) until retried, or lets it continue", async () => {
      await accept({ key: "blocked", version: 1 });
      await accept({ key: "blocked", version: 2 });
      await accept({ key: "open", version: 1 });
      await accept({ key: "open", version: 2 });
      const heads = await claim("w1");
      expect(heads.map((d) => d.orderingKey)).toEqual(["blocked", "open"]);
      const error = { message: "x", stack: null };
      await store.failDelivery({
        ...done(heads[0]!, "w1"),
        error,
        retryAt: null,
        outcome: "permanent",
        blockKey: true,
      });
      await store.failDelivery({
        ...done(heads[1]!, "w1"),
        error,
        retryAt: null,
        outcome: "permanent",
        blockKey: false,
      });
      expect((await claim("w1")).map((d) => [d.orderingKey, d.version])).toEqual([["open", 2]]);
      const retried = await store.retryDelivery(heads[0]!.id, T0 + 10);
      expect(retried).toMatchObject({ status: "pending", id: heads[0]!.id });
      const [again] = await claim("w1", 10, T0 + 10);
      expect(again).toMatchObject({ id: heads[0]!.id, attempt: 2, budgetAttempt: 1 });
      await store.completeDelivery(done(again!, "w1", T0 + 10));
      expect((await claim("w1", 10, T0 + 10)).map((d) => [d.orderingKey, d.version])).toEqual([
        ["blocked", 2],
      ]);
      const notDead = await rejectionOf(store.retryDelivery(again!.id, T0));
      expect(isHookinboxError(notDead, "HOOKINBOX_DELIVERY_NOT_RETRYABLE")).toBe(true);
      expect(await store.retryDelivery("dlv_01AAAAAAAAAAAAAAAAAAAAAAAA", T0)).toBeNull();
    });

    it("runs now: a pending retry becomes due now with its budget, a blocked one runs its key's head", async () => {
      await accept({ key: "k", version: 1 });
      await accept({ key: "k", version: 2 });
      const [head] = await claim("w1");
      await store.failDelivery({
        ...done(head!, "w1"),
        error: { message: "x", stack: null },
        retryAt: T0 + 3_600_000,
        outcome: "error",
        blockKey: true,
      });
      const blocked = (await store.listDeliveries({ status: "blocked" })).items;
      expect(blocked).toHaveLength(1);
      expect(await claim("w1", 10, T0 + 10)).toEqual([]);
      // Run the blocked one now: its head (the pending retry) is due now; order still holds.
      const view = await store.retryDelivery(blocked[0]!.id, T0 + 10);
      expect(view).toMatchObject({ id: blocked[0]!.id, status: "blocked" });
      const [again] = await claim("w1", 10, T0 + 10);
      expect(again).toMatchObject({ id: head!.id, attempt: 2, budgetAttempt: 2 });
      await store.failDelivery({
        ...done(again!, "w1", T0 + 10),
        error: { message: "y", stack: null },
        retryAt: T0 + 3_600_000,
        outcome: "error",
        blockKey: true,
      });
      // Run the pending head itself now: same budget (attempt 3 of the same budget).
      expect(await store.retryDelivery(head!.id, T0 + 20)).toMatchObject({
        status: "pending",
        runAt: new Date(T0 + 20).toISOString(),
      });
      const [third] = await claim("w1", 10, T0 + 20);
      expect(third).toMatchObject({ id: head!.id, attempt: 3, budgetAttempt: 3 });
      await store.completeDelivery(done(third!, "w1", T0 + 20));
      expect((await claim("w1", 10, T0 + 20)).map((d) => d.version)).toEqual([2]);
      // Running and finished deliveries are not "run now".
      const running = (await store.listDeliveries({ status: "running" })).items[0]!;
      const refused = await rejectionOf(store.retryDelivery(running.id, T0 + 20));
      expect(isHookinboxError(refused, "HOOKINBOX_DELIVERY_NOT_RETRYABLE")).toBe(true);
    });

    it("reports the applied version so an older event can be marked stale", async () => {
      await accept({ key: "sub", version: 20 });
      const [newer] = await claim("w1");
      await store.completeDelivery(done(newer!, "w1"));
      const { eventId } = await accept({ key: "sub", version: 10 });
      const [older] = await claim("w1");
      expect(older).toMatchObject({ version: 10, appliedVersion: 20 });
      await store.markStale(done(older!, "w1"));
      const event = await store.getEvent(eventId);
      expect(event!.deliveries[0]).toMatchObject({ status: "stale" });
      expect(event!.deliveries[0]!.attemptLog!.map((a) => a.outcome)).toEqual(["stale"]);
      expect(event!.status).toBe("done");
    });

    it("replays into new flagged deliveries without touching the original", async () => {
      const { eventId } = await accept({ targets: ["a"] });
      const [d] = await claim("w1");
      await store.completeDelivery(done(d!, "w1"));
      const before = (await store.getEvent(eventId))!.deliveries;
      const created = await store.replayEvent({ eventId, targets: ["a", "b"], now: T0 + 1 });
      expect(created.map((x) => [x.target, x.isReplay, x.replayOf, x.status])).toEqual([
        ["a", true, d!.id, "pending"],
        ["b", true, null, "pending"],
      ]);
      const after = (await store.getEvent(eventId))!.deliveries;
      expect(after[0]).toEqual(before[0]);
      expect((await store.getEvent(eventId))!.status).toBe("pending");
      const replayed = await claim("w1", 10, T0 + 1);
      expect(replayed.map((x) => x.isReplay)).toEqual([true, true]);
      const missing = await rejectionOf(
        store.replayEvent({ eventId: "evt_missing", targets: ["a"], now: T0 }),
      );
      expect(isHookinboxError(missing, "HOOKINBOX_EVENT_NOT_FOUND")).toBe(true);
    });

    it("close waits for markStale and replayEvent already started", async () => {
      // One operation per store, started once its event is stored (and, for markStale, claimed),
      // then close at once: nothing else keeps close() waiting.
      const operations: Array<
        [string, (s: Store, eventId: string) => Promise<() => Promise<unknown>>]
      > = [
        [
          "markStale",
          async (s) => {
            const [d] = await s.claimDeliveries({
              workerId: "w1",
              limit: 1,
              leaseMs: lease,
              now: T0,
            });
            return () => s.markStale(done(d!, "w1"));
          },
        ],
        [
          "replayEvent",
          async (s, eventId) => () => s.replayEvent({ eventId, targets: ["t"], now: T0 }),
        ],
      ];
      const outcomes: string[] = [];
      for (const [name, prepare] of operations) {
        const opened = await open();
        try {
          const { eventId } = await opened.store.accept(
            acceptInput({ receivedAt: T0, targets: ["t"] }),
          );
          const run = await prepare(opened.store, eventId);
          const started = run();
          await opened.store.close();
          const [settled] = await Promise.allSettled([started]);
          outcomes.push(`${name}: ${settled?.status}`);
        } finally {
          await opened.cleanup();
        }
      }
      expect(outcomes).toEqual(["markStale: fulfilled", "replayEvent: fulfilled"]);
    });

    it("bulk-replays by filter in batches and reports progress", async () => {
      for (let i = 0; i < 1203; i++) await accept({ targets: [] });
      await store.accept(
        acceptInput({ source: "other", receivedAt: T0, identity: { dedupKey: "x" }, targets: [] }),
      );
      expect(await store.countEvents({ source: "stripe" })).toBe(1203);
      const progress: number[] = [];
      const result = await store.replayWhere(
        { source: "stripe" },
        { now: T0, targetsFor: () => ["t"], onProgress: (n) => progress.push(n) },
      );
      expect(result).toEqual({ events: 1203, deliveries: 1203 });
      expect(progress).toEqual([500, 1000, 1203]);
      expect(await store.countEvents({ source: "stripe", receivedFrom: T0 + 1 })).toBe(0);
    });

    it("keeps an effect ledger: claim, done with result, busy, stale reclaim or hold", async () => {
      const { eventId } = await accept();
      const [d] = await claim("w1");
      const base = {
        eventId,
        target: "t",
        name: "email",
        onStale: "reclaim" as const,
        staleAfterMs: 100,
      };
      const first = await store.claimEffect({ ...base, claimant: d!.attemptId, now: T0 });
      expect(first).toMatchObject({ state: "claimed", reclaimed: false });
      // Another attempt while the first still runs: busy, even when old.
      expect(
        await store.claimEffect({ ...base, claimant: "att_other", now: T0 + 500 }),
      ).toMatchObject({ state: "busy" });
      // The first attempt's lease expires and is rescued: its claim is stale after 100 ms.
      await store.rescueExpiredLeases(T0 + lease + 1);
      const [retry] = await claim("w2", 10, T0 + lease + 1);
      expect(
        await store.claimEffect({ ...base, claimant: retry!.attemptId, now: T0 + 50 }),
      ).toMatchObject({ state: "busy" });
      const reclaimed = await store.claimEffect({
        ...base,
        claimant: retry!.attemptId,
        now: T0 + lease + 2,
      });
      expect(reclaimed).toMatchObject({
        state: "claimed",
        reclaimed: true,
        effectId: (first as { effectId: string }).effectId,
      });
      await store.completeEffect(
        reclaimed.effectId,
        retry!.attemptId,
        { messageId: "m-1" },
        T0 + lease + 3,
      );
      expect(
        await store.claimEffect({ ...base, claimant: "att_later", now: T0 + 10 * lease }),
      ).toEqual({
        state: "done",
        effectId: reclaimed.effectId,
        result: { messageId: "m-1" },
      });

      const held = { ...base, name: "charge", onStale: "hold" as const };
      const charge = await store.claimEffect({
        ...held,
        claimant: retry!.attemptId,
        now: T0 + lease + 3,
      });
      await store.rescueExpiredLeases(T0 + 10 * lease);
      expect(await store.claimEffect({ ...held, claimant: "att_x", now: T0 + 10 * lease })).toEqual(
        {
          state: "held",
          effectId: charge.effectId,
          newlyHeld: true,
        },
      );
      expect(
        await store.claimEffect({ ...held, claimant: "att_y", now: T0 + 11 * lease }),
      ).toMatchObject({ state: "held", newlyHeld: false });
      expect((await store.listEffects({ status: "held" })).map((e) => e.name)).toEqual(["charge"]);
      const resolved = await store.resolveEffect(charge.effectId, "done", T0);
      expect(resolved).toMatchObject({ status: "done" });
      expect(await store.resolveEffect("eff_missing", "done", T0)).toBeNull();

      const released = await store.claimEffect({
        ...base,
        name: "sms",
        claimant: "att_z",
        now: T0,
      });
      await store.releaseEffect(released.effectId, "att_z");
      expect(
        await store.claimEffect({ ...base, name: "sms", claimant: "att_w", now: T0 }),
      ).toMatchObject({ state: "claimed", reclaimed: false });
    });

    it("records the held-effect alert once, with the claim that holds the effect (core/effects.ts)", async () => {
      const { eventId } = await accept();
      const effect = { eventId, target: "t", name: "charge", onStale: "hold" as const };
      const occurrence = { condition: "effect-held:t:charge", kind: "effect-held", payload: {} };
      const heldAlert = { occurrences: [occurrence], windowMs: 60_000 };
      const claimAt = (claimant: string, now: number) =>
        store.claimEffect({ ...effect, staleAfterMs: 100, claimant, now, heldAlert });
      await claimAt("att_gone", T0);
      expect(await claimAt("att_fresh", T0 + 50)).toMatchObject({ state: "busy" });
      const held = await claimAt("att_next", T0 + 1000);
      expect(held).toMatchObject({ state: "held", newlyHeld: true });
      expect(await claimAt("att_again", T0 + 2000)).toMatchObject({ newlyHeld: false });
      const alerts = await store.claimDueAlerts(T0 + 10_000, 10, 1000);
      expect(alerts.map((a) => [a.kind, a.count, JSON.parse(a.payload).effectId])).toEqual([
        ["effect-held", 1, held.effectId],
      ]);
    });

    it("reports stuck work: expired leases, held effects, old undone events", async () => {
      await accept({ at: T0 - 7_200_000 });
      await claim("w1", 10, T0 - 7_200_000);
      const report = await store.stuck({ now: T0, olderThanMs: 3_600_000, limit: 10 });
      expect(report.expiredLeases).toHaveLength(1);
      expect(report.oldUndone).toHaveLength(1);
      expect(report.heldEffects).toEqual([]);
      const fresh = await store.stuck({ now: T0 - 7_200_000, olderThanMs: 3_600_000, limit: 10 });
      expect(fresh).toEqual({
        expiredLeases: [],
        abandoned: [],
        blockedKeys: [],
        heldEffects: [],
        oldUndone: [],
      });
    });
  });
}
