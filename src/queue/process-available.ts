import { hookinboxError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { QueueStore } from "../store/queue-types.ts";
import type { LeasePlan } from "./leases.ts";
import type { Worker, WorkerOptions } from "./worker.ts";

/** How long one `processAvailable` call may work, and on what. */
export interface ProcessAvailableOptions {
  /** Stop claiming this long after the call began (default 10 000 ms). */
  readonly maxMs?: number;
  /** Handlers run at once (default `worker.concurrency`). */
  readonly concurrency?: number;
  /** How long after `maxMs` running handlers may still finish (default 5 000 ms). */
  readonly graceMs?: number;
  /** Only deliveries of these events (e.g. the ones this invocation just accepted). */
  readonly eventIds?: readonly string[];
}

/** What one `processAvailable` call did, in deliveries. */
export interface ProcessAvailableResult {
  /** Completed (stale ones, skipped as older than what was applied, included). */
  readonly done: number;
  /** The attempt failed and a retry is scheduled. */
  readonly retried: number;
  /** Dead-lettered. */
  readonly dead: number;
  /**
   * Attempts that ended with no recorded outcome: lease lost, abandoned (past the handler's
   * timeout, or still running at the grace deadline), or a store error. Their leases expire and
   * a later call (or worker) rescues them.
   */
  readonly failed: number;
  /** Claimed but not started before the deadline: due again, no attempt charged. */
  readonly released: number;
  /** Deliveries still due when the call returned (of `eventIds` only, when given). */
  readonly remaining: number;
}

/** What a call needs from its inbox. */
export interface ProcessAvailableContext {
  readonly store: QueueStore;
  /** The inbox's clock (store times). */
  readonly now: () => number;
  readonly logger: Logger;
  readonly defaultConcurrency: number;
  /** Every lease this inbox's workers take (handlers' own, destinations', the default). */
  readonly leases: LeasePlan;
  /** Resolves once the store is migrated. */
  readonly ready: Promise<unknown>;
  /** Starts a worker with the inbox's handlers and destinations (not registered for upkeep). */
  readonly startWorker: (overrides: Pick<WorkerOptions, "concurrency" | "bounded">) => Worker;
  /** Per inbox: whether the short-lease warning was logged already. */
  readonly leaseWarning: { warned: boolean };
}

const defaults = { maxMs: 10_000, graceMs: 5_000 };

function invalid(detail: string): never {
  throw hookinboxError("HOOKINBOX_PROCESS_OPTIONS_INVALID", detail);
}

function checkedOptions(options: ProcessAvailableOptions, defaultConcurrency: number) {
  const maxMs = options.maxMs ?? defaults.maxMs;
  const graceMs = options.graceMs ?? defaults.graceMs;
  const concurrency = options.concurrency ?? defaultConcurrency;
  if (!Number.isFinite(maxMs) || maxMs < 0) invalid(`maxMs ${maxMs}`);
  if (!Number.isFinite(graceMs) || graceMs < 0) invalid(`graceMs ${graceMs}`);
  if (!Number.isInteger(concurrency) || concurrency < 1) invalid(`concurrency ${concurrency}`);
  const { eventIds } = options;
  if (
    eventIds !== undefined &&
    !(Array.isArray(eventIds) && eventIds.every((id) => typeof id === "string"))
  )
    invalid("eventIds must be an array of strings");
  return { maxMs, graceMs, concurrency, eventIds };
}

/**
 * The targets (and `"default"`) whose lease is at most `boundMs`: a call killed by its host
 * (past the host's maximum duration) leaves its deliveries leased until the lease runs out, and a
 * lease no longer than the call itself can expire while the call still runs.
 *
 * @example
 * ```ts
 * shortLeases(leasePlan(30_000, handlers), 15_000); // [] with no handler lease of 15 s or less
 * ```
 */
export function shortLeases(plan: LeasePlan, boundMs: number): string[] {
  const short = Object.entries(plan.targetLeaseMs)
    .filter(([, ms]) => ms <= boundMs)
    .map(([target]) => target);
  return plan.defaultMs <= boundMs ? ["default", ...short] : short;
}

/**
 * Processes what is due, for a bounded time, and returns: for serverless hosts and cron. Rescues
 * expired leases once, then claims due deliveries (handlers and destinations alike, as a worker
 * does) and runs up to `concurrency` at a time until nothing is due or `maxMs` has passed; then
 * stops claiming, puts back what it claimed but did not start (no attempt charged), lets running
 * handlers finish for up to `graceMs`, and abandons the rest (their leases expire). Nothing it
 * starts outlives the call: no LISTEN, no upkeep, no timer.
 *
 * @example
 * ```ts
 * const result = await processAvailable(context, { maxMs: 50_000, graceMs: 5_000 });
 * // { done: 12, retried: 1, dead: 0, failed: 0, released: 0, remaining: 0 }
 * ```
 */
export async function processAvailable(
  context: ProcessAvailableContext,
  options: ProcessAvailableOptions = {},
): Promise<ProcessAvailableResult> {
  const { maxMs, graceMs, concurrency, eventIds } = checkedOptions(
    options,
    context.defaultConcurrency,
  );
  const started = performance.now();
  const { store, now, logger } = context;
  await context.ready;
  if (!context.leaseWarning.warned) {
    const short = shortLeases(context.leases, maxMs + graceMs);
    if (short.length > 0) {
      context.leaseWarning.warned = true;
      logger.warn(
        { leases: short, maxMs, graceMs },
        "processAvailable: a lease is not longer than maxMs + graceMs; a lease must outlast the call and the host's maximum function duration, or a delivery may run twice",
      );
    }
  }
  // A killed earlier call (or a crashed worker) left these: due again before this call claims.
  await store.rescueExpiredLeases(now());
  const worker = context.startWorker({
    concurrency,
    bounded: eventIds ? { eventIds } : {},
  });
  let deadline: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      worker.idle(),
      new Promise<void>((resolve) => {
        deadline = setTimeout(resolve, Math.max(0, maxMs - (performance.now() - started)));
      }),
    ]);
  } finally {
    clearTimeout(deadline);
  }
  const stopped = await worker.stop(graceMs);
  const counts = worker.stats();
  return {
    done: counts.done + counts.stale,
    retried: counts.retry,
    dead: counts.dead,
    failed: counts["lease-lost"] + counts.abandoned + stopped.abandoned + stopped.storeErrors,
    released: stopped.released,
    remaining: await store.countDue({ now: now(), ...(eventIds ? { eventIds } : {}) }),
  };
}
