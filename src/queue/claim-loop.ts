import type { Logger } from "../log.ts";
import type { ClaimedDelivery, QueueStore } from "../store/queue-types.ts";
import type { InFlight } from "./in-flight.ts";
import type { LeasePlan } from "./leases.ts";
import type { WorkerMetrics } from "./worker-metrics.ts";

/**
 * Where the claim loop is:
 * - `starting`: the store is not ready yet; nothing is claimed;
 * - `waiting`: a timer is armed for the next due time (or the poll interval); a wake starts a pass;
 * - `claiming`: one pass is under way (`current`); a wake meanwhile asks for another pass;
 * - `stopped`: no pass starts again; claims that land after the stop are put back.
 */
export type ClaimLoopMode = "starting" | "waiting" | "claiming" | "stopped";

/** What the claim loop needs from its worker. */
export interface ClaimLoopOptions {
  readonly store: QueueStore;
  readonly workerId: string;
  readonly concurrency: number;
  readonly leases: LeasePlan;
  readonly pollIntervalMs: number;
  readonly now: () => number;
  readonly inFlight: InFlight;
  /**
   * Claimed deliveries waiting for a free slot (prefetched): their leases are kept like running
   * ones (leases.ts); a lost one's `abort` is aborted and it is not started.
   */
  readonly queued: InFlight;
  /** Deliveries whose handler returned, their "done" still being recorded: not idle until none. */
  readonly finishing: InFlight;
  /** Runs one claimed delivery (it is in `inFlight` until it ends, then calls `ended`). */
  readonly run: (delivery: ClaimedDelivery) => void;
  /** Flow control (destinations): which claimed deliveries may run now; the rest were deferred. */
  readonly admit?: (claimed: ClaimedDelivery[]) => Promise<ClaimedDelivery[]>;
  readonly log: Logger;
  readonly metrics?: WorkerMetrics;
  /** Claim only deliveries of these events (`processAvailable({ eventIds })`). */
  readonly eventIds?: readonly string[];
}

/** The loop that claims work for a worker. */
export interface ClaimLoop {
  readonly mode: ClaimLoopMode;
  /** The store is ready: the first pass starts. */
  begin(): void;
  /**
   * Something may have become due (a delivery ended, an accept, another process's NOTIFY, a
   * rescue): a pass starts on the next turn, coalesced with other wakes of the same turn.
   */
  wake(): void;
  /**
   * A delivery started by `run` ended after `ms` (start to freed slot): its slot is free, and
   * the time sizes the prefetch. Wakes like `wake`.
   */
  ended(ms: number): void;
  /** Resolves at the end of a pass that found nothing in flight and nothing due, and saw no wake. */
  idle(): Promise<void>;
  /** No pass starts again; resolves once the pass under way (if any) has ended. */
  stop(): Promise<void>;
  /** How many claimed deliveries were put back unstarted (no attempt charged) so far. */
  readonly released: number;
}

/** How far ahead of its free slots a worker claims: what its slots would start in this long. */
export const PREFETCH_HORIZON_MS = 100;
/** The most deliveries a worker holds claimed but not started. */
export const MAX_PREFETCH = 250;

/**
 * How many deliveries to claim beyond the free slots: as many as `concurrency` slots would start
 * within PREFETCH_HORIZON_MS (and within a tenth of the shortest lease) at the measured time per
 * delivery, at most MAX_PREFETCH. None before a delivery has ended (nothing measured yet).
 *
 * @example
 * ```ts
 * prefetchSize(10, 4, 30_000); // 250: no-op handlers, 4 ms from start to freed slot
 * prefetchSize(10, 2_000, 30_000); // 0: slow handlers claim one per free slot
 * ```
 */
export function prefetchSize(concurrency: number, msPerDelivery: number, shortestLeaseMs: number) {
  if (!(msPerDelivery > 0)) return 0;
  const horizon = Math.min(PREFETCH_HORIZON_MS, shortestLeaseMs / 10);
  return Math.min(MAX_PREFETCH, Math.floor((concurrency * horizon) / msPerDelivery));
}

/**
 * Starts a worker's claim loop. A pass claims for every free slot (at most `concurrency` in
 * flight) until a claim comes back short, then asks the store for the next due time and waits
 * until then (at most `pollIntervalMs`). When handlers are fast, a claim also takes what the
 * slots would start soon (prefetchSize; at most twice what the last claim got, or `concurrency`,
 * so sparse work keeps claims small) and keeps it in `queued`: one claim's round trips and
 * commit serve many deliveries. A queued delivery whose lease was lost, or whose lease as claimed
 * has run out, is not started (the latter is handed back). Every wake is counted: a pass that saw the count change
 * while it asked for the due time cannot call the worker idle, since a delivery that ended
 * meanwhile may have made work due that the answer does not show (see worker-idle.test.ts).
 *
 * @example
 * ```ts
 * const loop = startClaimLoop({ store, workerId, concurrency: 10, leases, pollIntervalMs: 1000, now, inFlight, run, log });
 * loop.begin();
 * await loop.idle();
 * await loop.stop();
 * ```
 */
export function startClaimLoop(options: ClaimLoopOptions): ClaimLoop {
  const { store, workerId, concurrency, leases, now, inFlight, queued, finishing, log } = options;
  const shortestLeaseMs = Math.min(leases.defaultMs, ...Object.values(leases.targetLeaseMs));
  /** Moving average of start → freed slot, ms (0: nothing ended yet). */
  let msPerDelivery = 0;
  /** Claimed, not started, in claim order. */
  let waitingIds: string[] = [];
  /** How many the last claim leased: a claim asks ahead for at most twice that (or `concurrency`). */
  let lastLeased = 0;
  let mode: ClaimLoopMode = "starting";
  let current: Promise<void> | null = null;
  let again = false;
  let wakes = 0;
  let timer: NodeJS.Timeout | undefined;
  let wakeQueued = false;
  let idleWaiters: Array<() => void> = [];

  let released = 0;
  /** Puts back claimed deliveries that will not be started, uncounted. */
  const release = async (ids: string[]) => {
    if (ids.length > 0) released += await store.releaseDeliveries(workerId, ids, now());
  };
  const { eventIds } = options;
  /** The next due time; with `eventIds`, now if one of theirs is due, else null (none watched). */
  const nextDueAt = async () => {
    if (eventIds === undefined) return store.nextDueAt();
    return (await store.countDue({ now: now(), eventIds })) > 0 ? now() : null;
  };
  /** Queued deliveries whose lease as claimed ran out before a slot freed: handed back next pass. */
  const expired: string[] = [];

  /** Starts queued deliveries while slots are free (also between passes, as slots free up). */
  const startQueued = () => {
    while (mode !== "stopped" && inFlight.size < concurrency && waitingIds.length > 0) {
      const id = waitingIds.shift() as string;
      const entry = queued.get(id);
      queued.delete(id);
      if (!entry || entry.abort.signal.aborted) continue;
      if (Number(entry.delivery.leaseExpiresAt) <= now()) expired.push(id);
      else options.run(entry.delivery);
    }
  };

  /** Puts back every queued delivery and every expired one (stop). */
  const releaseQueued = async () => {
    const ids = waitingIds.filter((id) => queued.get(id)?.abort.signal.aborted === false);
    for (const id of waitingIds) queued.delete(id);
    waitingIds = [];
    await release([...expired.splice(0), ...ids]);
  };

  /**
   * Claims for free slots until a claim comes back short or flow control deferred some; with a
   * prefetch, also tops the queue up once it is down to half.
   */
  const claimFree = async () => {
    startQueued();
    await release(expired.splice(0));
    while (mode === "claiming") {
      const free = concurrency - inFlight.size;
      // Flow control decides per claim what may run now: nothing is claimed ahead for it.
      // Sparse work (an idle worker woken per event) gets small claims; a backlog doubles them.
      const ahead = options.admit
        ? 0
        : Math.min(
            prefetchSize(concurrency, msPerDelivery, shortestLeaseMs),
            Math.max(concurrency, 2 * lastLeased),
          );
      const want = Math.max(0, free) + ahead - waitingIds.length;
      if ((free <= 0 && waitingIds.length * 2 > ahead) || want <= 0) return;
      const claimed = await store.claimDeliveries({
        workerId,
        limit: want,
        leaseMs: leases.defaultMs,
        targetLeaseMs: leases.targetLeaseMs,
        now: now(),
        ...(eventIds ? { eventIds } : {}),
      });
      lastLeased = claimed.length;
      if (mode !== "claiming") {
        // Claimed while stop() began: put back what will not be started, uncounted.
        await release(claimed.map((d) => d.id));
        return;
      }
      const runnable = options.admit ? await options.admit(claimed) : claimed;
      for (const delivery of runnable) {
        queued.add({ delivery, abort: new AbortController(), leaseMs: leases.of(delivery.target) });
        waitingIds.push(delivery.id);
      }
      startQueued();
      if (claimed.length < want || runnable.length < claimed.length) return;
    }
  };

  /** One pass; returns how long to wait before the next one. */
  const pass = async (): Promise<number> => {
    try {
      do {
        again = false;
        await claimFree();
      } while (again && mode === "claiming");
      if (mode !== "claiming" || inFlight.size >= concurrency) return options.pollIntervalMs;
      const seen = wakes;
      const due = await nextDueAt();
      if (wakes !== seen) again = true;
      else if (
        inFlight.size + finishing.size === 0 &&
        waitingIds.length === 0 &&
        (due === null || due > now())
      )
        for (const resolve of idleWaiters.splice(0)) resolve();
      return due === null ? options.pollIntervalMs : due - now();
    } catch (error) {
      options.metrics?.storeError("claim");
      log.error({ err: (error as Error).message }, "claiming failed; retrying shortly");
      return Math.min(options.pollIntervalMs, 500);
    }
  };

  const startPass = () => {
    if (mode === "claiming") {
      again = true;
      return;
    }
    if (mode !== "waiting") return;
    clearTimeout(timer);
    mode = "claiming";
    current = pass().then((delayMs) => {
      current = null;
      if (mode !== "claiming") return;
      mode = "waiting";
      if (again) startPass();
      // Not unref'd: a running worker keeps a worker-only process alive until stop().
      else timer = setTimeout(startPass, Math.max(0, Math.min(delayMs, options.pollIntervalMs)));
    });
  };

  // Completions of one group commit resolve in the same turn: one pass for all their freed slots
  // (bench:queue: a claim per completion cost 3 commits per 10 deliveries before).
  const nextTurn = () => {
    if (wakeQueued) return;
    wakeQueued = true;
    setImmediate(() => {
      wakeQueued = false;
      startPass();
    });
  };

  return {
    get mode() {
      return mode;
    },
    get released() {
      return released;
    },
    begin() {
      if (mode !== "starting") return;
      mode = "waiting";
      startPass();
    },
    wake() {
      wakes++;
      nextTurn();
    },
    ended(ms) {
      msPerDelivery = msPerDelivery === 0 ? ms : msPerDelivery * 0.9 + ms * 0.1;
      startQueued();
      wakes++;
      nextTurn();
    },
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        startPass();
      }),
    async stop() {
      mode = "stopped";
      clearTimeout(timer);
      idleWaiters = [];
      await current;
      await releaseQueued();
    },
  };
}
