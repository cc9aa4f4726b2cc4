import { randomBytes } from "node:crypto";
import type { Tracer } from "@opentelemetry/api";
import type { ResolvedAlerts } from "../config/resolve.ts";
import type { Forwarder } from "../forward/forwarder.ts";
import type { ResolvedHandler } from "../handlers/routes.ts";
import type { Logger } from "../log.ts";
import type { ClaimedDelivery, QueueStore } from "../store/queue-types.ts";
import { traceAttempt } from "../tracing/delivery-span.ts";
import { startClaimLoop } from "./claim-loop.ts";
import { createInFlight } from "./in-flight.ts";
import { keepLeases, leasePlan } from "./leases.ts";
import { type RunOutcome, runDelivery } from "./run-delivery.ts";
import { workerAlerts } from "./worker-alerts.ts";
import type { WorkerMetrics } from "./worker-metrics.ts";

/** Worker settings (see `worker` in the config). */
export interface WorkerOptions {
  readonly store: QueueStore;
  readonly handlers: ReadonlyMap<string, ResolvedHandler>;
  readonly logger: Logger;
  readonly concurrency: number;
  /** Default lease; a handler's own `lease` wins. Must exceed the handler's p99 duration. */
  readonly leaseMs: number;
  /** Longest sleep between looks for due work when nothing wakes the worker (retries, other processes). */
  readonly pollIntervalMs: number;
  readonly alerts?: ResolvedAlerts;
  /** Counts attempts, outcomes, rescues and store errors for `/metrics`. */
  readonly metrics?: WorkerMetrics;
  readonly now?: () => number;
  readonly random?: () => number;
  readonly workerId?: string;
  /** Resolves once the store is migrated: the worker claims nothing before (no startup noise). */
  readonly ready?: Promise<unknown>;
  /** Destination targets (forwarding): created with this worker's id, closed when it stops. */
  readonly forwarder?: (workerId: string) => Forwarder;
  /**
   * A bounded run (`processAvailable`): no LISTEN for other processes' work, no sweep for others'
   * expired leases (only its own are kept), and only deliveries of `eventIds` when given.
   */
  readonly bounded?: { readonly eventIds?: readonly string[] };
  /** Traces each attempt as `delivery.attempt` (absent when `tracing.enabled` is off). */
  readonly tracer?: Tracer;
}

/** What `stop()` left behind. */
export interface WorkerStopped {
  /** Claimed deliveries put back unstarted since the worker started (no attempt charged). */
  readonly released: number;
  /** Handlers still running at the stop timeout: aborted and left to their leases. */
  readonly abandoned: number;
  /** Attempts whose bookkeeping failed in the store since start (their leases will expire). */
  readonly storeErrors: number;
}

/** A running worker. */
export interface Worker {
  readonly id: string;
  readonly mode: WorkerMode;
  /** Look for due work now (called when an accept created deliveries). */
  notify(): void;
  /**
   * Stops claiming, waits up to `timeoutMs` for in-flight handlers, then aborts the rest (their
   * leases expire and they are rescued).
   */
  stop(timeoutMs?: number): Promise<WorkerStopped>;
  /** Resolves when nothing is in flight and nothing is due (tests, benchmarks). */
  idle(): Promise<void>;
  /** Counts since start. */
  stats(): Readonly<Record<RunOutcome, number>>;
}

/**
 * Where a worker is: `running` (claiming, see claim-loop.ts for its modes), `draining` (stop()
 * began: nothing is claimed, in-flight handlers get up to the stop timeout), `stopped`.
 */
export type WorkerMode = "running" | "draining" | "stopped";

/**
 * Starts a worker from its parts: the claim loop (claim-loop.ts) claims due deliveries (at most
 * `concurrency` in flight), each runs its handler or forward, lease keeping (leases.ts) extends
 * each delivery's own lease every third of the shortest lease and rescues expired ones, and
 * alerts (worker-alerts.ts) sweep dead letters. It wakes on `notify()` (no polling delay on the
 * hot path), on another process's NOTIFY, at the next due time, and at least every
 * `pollIntervalMs`.
 *
 * @example
 * ```ts
 * const worker = startWorker({ store, handlers, logger, concurrency: 10, leaseMs: 30_000, pollIntervalMs: 1000 });
 * process.on("SIGTERM", () => worker.stop(30_000));
 * ```
 */
export function startWorker(options: WorkerOptions): Worker {
  const id = options.workerId ?? `wrk_${randomBytes(6).toString("hex")}`;
  const now = options.now ?? Date.now;
  const { store, metrics } = options;
  const log = options.logger.child({ workerId: id });
  const forwarder = options.forwarder?.(id);
  const leases = leasePlan(options.leaseMs, options.handlers, forwarder?.leases);
  const inFlight = createInFlight();
  const queued = createInFlight();
  // Handlers that returned, whose "done" is being recorded (batched): their slots are free, their
  // leases still kept, and idle() and stop() wait for them. At most `maxFinishing` at once.
  const finishing = createInFlight();
  const maxFinishing = options.concurrency * 10;
  const started = new Map<string, number>();
  const freeSlot = (deliveryId: string) => {
    const entry = inFlight.get(deliveryId);
    if (!entry) return;
    inFlight.delete(deliveryId);
    loop.ended(performance.now() - (started.get(deliveryId) ?? performance.now()));
    return entry;
  };
  const counts: Record<RunOutcome, number> = {
    done: 0,
    stale: 0,
    retry: 0,
    dead: 0,
    "lease-lost": 0,
    abandoned: 0,
  };
  let mode: WorkerMode = "running";
  let storeErrors = 0;
  let abandoned = 0;
  // Aborted at the stop timeout: counted in `abandoned`, whatever they record later.
  const abandonedAtStop = new Set<string>();

  const alerts = workerAlerts({
    store,
    ...(options.alerts ? { alerts: options.alerts } : {}),
    log,
    now,
    ...(metrics ? { metrics } : {}),
    sweepEveryMs: Math.max(100, Math.floor(options.leaseMs / 2)),
    pollIntervalMs: options.pollIntervalMs,
  });
  const runContext = {
    store,
    handlers: options.handlers,
    workerId: id,
    now,
    random: options.random ?? Math.random,
    logger: log,
    onEffectHeld: alerts.effectHeld,
    heldAlert: alerts.heldAlert,
    handlerReturned: (delivery: ClaimedDelivery) => {
      if (finishing.size >= maxFinishing) return;
      const entry = freeSlot(delivery.id);
      if (entry) finishing.add(entry);
    },
  };

  const run = (delivery: ClaimedDelivery) => {
    const abort = new AbortController();
    const forwarding = forwarder?.has(delivery.target) === true;
    inFlight.add({ delivery, abort, leaseMs: leases.of(delivery.target) });
    const startedAt = performance.now();
    started.set(delivery.id, startedAt);
    const seconds = () => (performance.now() - startedAt) / 1000;
    metrics?.attemptStarted(delivery.target);
    traceAttempt(
      options.tracer,
      delivery,
      { claimedAt: now(), kind: forwarding ? "forward" : "handler" },
      () =>
        forwarding
          ? forwarder!.run(delivery, abort.signal)
          : runDelivery(runContext, delivery, abort.signal),
    )
      .then(
        (outcome) => {
          if (abandonedAtStop.has(delivery.id)) return;
          counts[outcome]++;
          metrics?.attemptEnded(delivery.target, outcome, seconds());
          if (outcome === "dead") alerts.deadLetter();
        },
        (error: unknown) => {
          if (!abandonedAtStop.has(delivery.id)) storeErrors++;
          metrics?.attemptEnded(delivery.target, "crashed", seconds());
          metrics?.storeError("delivery");
          log.error(
            { deliveryId: delivery.id, err: (error as Error).message },
            "delivery bookkeeping failed; the lease will expire and be rescued",
          );
        },
      )
      .finally(() => {
        if (finishing.get(delivery.id)) {
          finishing.delete(delivery.id);
          loop.wake();
        } else freeSlot(delivery.id);
        started.delete(delivery.id);
      });
  };

  const loop = startClaimLoop({
    store,
    workerId: id,
    concurrency: options.concurrency,
    leases,
    pollIntervalMs: options.pollIntervalMs,
    now,
    inFlight,
    queued,
    finishing,
    run,
    ...(forwarder ? { admit: (claimed: ClaimedDelivery[]) => forwarder.admit(claimed) } : {}),
    log,
    ...(metrics ? { metrics } : {}),
    ...(options.bounded?.eventIds ? { eventIds: options.bounded.eventIds } : {}),
  });

  // Other processes' commits wake this worker where the store can tell (PostgreSQL NOTIFY).
  const unsubscribe = options.bounded ? undefined : store.onDeliveries?.(() => loop.wake());
  let keeping: { stop(): void } | undefined;
  const begin = () => {
    if (mode !== "running") return;
    keeping = keepLeases({
      store,
      workerId: id,
      plan: leases,
      inFlight,
      alsoHeld: [queued, finishing],
      now,
      log,
      ...(metrics ? { metrics } : {}),
      onRescued: () => loop.wake(),
      rescue: !options.bounded,
    });
    alerts.start();
    loop.begin();
  };
  // A store that failed to migrate is reported by ready() and /readyz; the worker still polls.
  if (options.ready) options.ready.then(begin, begin);
  else begin();

  return {
    id,
    get mode() {
      return mode;
    },
    notify: () => loop.wake(),
    idle: () => loop.idle(),
    stats: () => ({ ...counts }),
    async stop(timeoutMs = 30_000) {
      const stopped = () => ({ released: loop.released, abandoned, storeErrors });
      if (mode !== "running") return stopped();
      mode = "draining";
      unsubscribe?.();
      alerts.stop();
      // Nothing is leased after this resolves: a claim under way is put back.
      await loop.stop();
      if (!(await inFlight.settled(timeoutMs))) {
        log.warn(
          { inFlight: inFlight.size },
          "shutdown timeout: abandoning in-flight deliveries; their leases will expire",
        );
        abandoned = inFlight.size;
        for (const entry of inFlight.values()) {
          abandonedAtStop.add(entry.delivery.id);
          entry.abort.abort(new Error("worker shutting down"));
        }
      }
      await finishing.settled(timeoutMs);
      keeping?.stop();
      // A dead letter's alert under way goes out (and is marked) before the store may close; a
      // hook that hangs holds the stop no longer than the timeout (the next sweep sends it again).
      let late: NodeJS.Timeout | undefined;
      await Promise.race([
        alerts.settled(),
        new Promise((resolve) => {
          late = setTimeout(resolve, timeoutMs);
        }),
      ]);
      clearTimeout(late);
      await forwarder?.close().catch(() => undefined);
      mode = "stopped";
      return stopped();
    },
  };
}
