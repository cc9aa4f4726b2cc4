import type { WorkerMetrics } from "../admin/metrics.ts";
import type { Logger } from "../log.ts";
import type { ClaimedDelivery, QueueStore } from "../store/queue-types.ts";
import type { InFlight } from "./in-flight.ts";
import type { LeasePlan } from "./leases.ts";

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
  /** Runs one claimed delivery (it is in `inFlight` until it ends, then calls `wake`). */
  readonly run: (delivery: ClaimedDelivery) => void;
  /** Flow control (destinations): which claimed deliveries may run now; the rest were deferred. */
  readonly admit?: (claimed: ClaimedDelivery[]) => Promise<ClaimedDelivery[]>;
  readonly log: Logger;
  readonly metrics?: WorkerMetrics;
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
  /** Resolves at the end of a pass that found nothing in flight and nothing due, and saw no wake. */
  idle(): Promise<void>;
  /** No pass starts again; resolves once the pass under way (if any) has ended. */
  stop(): Promise<void>;
}

/**
 * Starts a worker's claim loop. A pass claims for every free slot (at most `concurrency` in
 * flight) until a claim comes back short, then asks the store for the next due time and waits
 * until then (at most `pollIntervalMs`). Every wake is counted: a pass that saw the count change
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
  const { store, workerId, concurrency, leases, now, inFlight, log } = options;
  let mode: ClaimLoopMode = "starting";
  let current: Promise<void> | null = null;
  let again = false;
  let wakes = 0;
  let timer: NodeJS.Timeout | undefined;
  let wakeQueued = false;
  let idleWaiters: Array<() => void> = [];

  /** Claims for free slots until a claim comes back short or flow control deferred some. */
  const claimFree = async () => {
    while (mode === "claiming" && inFlight.size < concurrency) {
      const free = concurrency - inFlight.size;
      const claimed = await store.claimDeliveries({
        workerId,
        limit: free,
        leaseMs: leases.defaultMs,
        targetLeaseMs: leases.targetLeaseMs,
        now: now(),
      });
      if (mode !== "claiming") {
        // Claimed while stop() began: put back what will not be started, uncounted.
        await store.releaseDeliveries(
          workerId,
          claimed.map((d) => d.id),
          now(),
        );
        return;
      }
      const runnable = options.admit ? await options.admit(claimed) : claimed;
      for (const delivery of runnable) options.run(delivery);
      if (claimed.length < free || runnable.length < claimed.length) return;
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
      const due = await store.nextDueAt();
      if (wakes !== seen) again = true;
      else if (inFlight.size === 0 && (due === null || due > now()))
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
    begin() {
      if (mode !== "starting") return;
      mode = "waiting";
      startPass();
    },
    wake() {
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
    },
  };
}
