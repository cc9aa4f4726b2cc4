import { randomBytes } from "node:crypto";
import type { WorkerMetrics } from "../admin/metrics.ts";
import { deliverDueAlerts } from "../alerts/deliver.ts";
import { effectHeldOccurrence, recordAlert } from "../alerts/occurrences.ts";
import { evaluateThresholds } from "../alerts/thresholds.ts";
import type { ResolvedAlerts } from "../config/resolve.ts";
import type { Forwarder } from "../forward/forwarder.ts";
import type { ResolvedHandler } from "../handlers/routes.ts";
import type { Logger } from "../log.ts";
import type { ClaimedDelivery, QueueStore } from "../store/queue-types.ts";
import { sweepDeadLetterAlerts } from "./dead-letter-alerts.ts";
import { type RunOutcome, runDelivery } from "./run-delivery.ts";

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
}

/** A running worker. */
export interface Worker {
  readonly id: string;
  /** Look for due work now (called when an accept created deliveries). */
  notify(): void;
  /**
   * Stops claiming, waits up to `timeoutMs` for in-flight handlers, then aborts the rest (their
   * leases expire and they are rescued).
   */
  stop(timeoutMs?: number): Promise<void>;
  /** Resolves when nothing is in flight and nothing is due (tests, benchmarks). */
  idle(): Promise<void>;
  /** Counts since start. */
  stats(): Readonly<Record<RunOutcome, number>>;
}

/**
 * Starts a worker: it claims due deliveries (at most `concurrency` in flight), runs their
 * handlers, extends their leases by heartbeat every third of the lease, rescues expired leases,
 * and sends dead-letter alerts. It wakes on `notify()` (no polling delay on the hot path), at the
 * next due time, and at least every `pollIntervalMs`.
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
  const random = options.random ?? Math.random;
  const { store, logger, concurrency } = options;
  const log = logger.child({ workerId: id });
  const forwarder = options.forwarder?.(id);
  const inFlight = new Map<
    string,
    { delivery: ClaimedDelivery; abort: AbortController; leaseMs: number }
  >();
  const counts: Record<RunOutcome, number> = {
    done: 0,
    stale: 0,
    retry: 0,
    dead: 0,
    "lease-lost": 0,
    abandoned: 0,
  };
  let stopping = false;
  /** Whether the store is ready (see `ready`); nothing is claimed before. */
  let begun = false;
  let pumping = false;
  let pumpAgain = false;
  let timer: NodeJS.Timeout | undefined;
  let idleWaiters: Array<() => void> = [];
  /**
   * Bumped by everything that can make work due behind a look's back: a delivery ending (its
   * commit may wake the next of its ordering key), notify(), another process's NOTIFY. A look
   * that saw it change did not see everything, so it cannot declare the worker idle.
   */
  let wakes = 0;
  const drained: Array<() => void> = [];

  // A dead letter while a sweep runs asks for one more sweep, so none waits for the next tick.
  const alerting = { running: false, again: false };
  const alertDeadLetters = () => {
    if (alerting.running) {
      alerting.again = true;
      return;
    }
    alerting.running = true;
    alerting.again = false;
    sweepDeadLetterAlerts(store, options.alerts, log, now)
      .catch((error: unknown) =>
        log.error({ err: (error as Error).message }, "dead-letter alert sweep failed"),
      )
      .then(() => sendAlerts())
      .finally(() => {
        alerting.running = false;
        if (alerting.again && !stopping) alertDeadLetters();
      });
  };

  // Thresholds, then the outbox: one pass at a time per worker.
  const sending = { running: false };
  const sendAlerts = async () => {
    if (!options.alerts?.webhook || sending.running) return;
    sending.running = true;
    try {
      await evaluateThresholds(store, options.alerts, now());
      await deliverDueAlerts(store, options.alerts, log, now());
    } catch (error) {
      log.error({ err: (error as Error).message }, "alert outbox pass failed");
    } finally {
      sending.running = false;
    }
  };

  const onEffectHeld = ({
    effectId,
    name,
    delivery,
  }: {
    effectId: string;
    name: string;
    delivery: ClaimedDelivery;
  }) => {
    const alert = {
      effectId,
      name,
      eventId: delivery.eventId,
      deliveryId: delivery.id,
      target: delivery.target,
      source: delivery.source,
    };
    options.metrics?.effectHeld(delivery.target);
    log.error(
      { ...alert, outcome: "effect-held" },
      "effect held for a human: an earlier claim went stale",
    );
    recordAlert(store, options.alerts, log, [effectHeldOccurrence(alert)], now());
    try {
      Promise.resolve(options.alerts?.onEffectHeld?.(alert)).catch((error: unknown) =>
        log.error({ err: (error as Error).message }, "onEffectHeld alert failed"),
      );
    } catch (error) {
      log.error({ err: (error as Error).message }, "onEffectHeld alert failed");
    }
  };

  const runContext = {
    store,
    handlers: options.handlers,
    workerId: id,
    now,
    random,
    logger: log,
    onEffectHeld,
  };

  const start = (delivery: ClaimedDelivery) => {
    const abort = new AbortController();
    const forwarding = forwarder?.has(delivery.target) === true;
    const leaseMs = forwarding
      ? forwarder!.leaseMs(delivery.target)
      : (options.handlers.get(delivery.target)?.leaseMs ?? options.leaseMs);
    inFlight.set(delivery.id, { delivery, abort, leaseMs });
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    options.metrics?.attemptStarted(delivery.target);
    (forwarding
      ? forwarder!.run(delivery, abort.signal)
      : runDelivery(runContext, delivery, abort.signal)
    )
      .then(
        (outcome) => {
          counts[outcome]++;
          options.metrics?.attemptEnded(delivery.target, outcome, seconds());
          if (outcome === "dead") alertDeadLetters();
        },
        (error: unknown) => {
          options.metrics?.attemptEnded(delivery.target, "crashed", seconds());
          options.metrics?.storeError("delivery");
          log.error(
            { deliveryId: delivery.id, err: (error as Error).message },
            "delivery bookkeeping failed; the lease will expire and be rescued",
          );
        },
      )
      .finally(() => {
        inFlight.delete(delivery.id);
        wakes++;
        if (stopping && inFlight.size === 0) for (const resolve of drained.splice(0)) resolve();
        requestPump();
      });
  };

  const schedule = (delayMs: number) => {
    if (stopping) return;
    if (timer) clearTimeout(timer);
    // Not unref'd: a running worker keeps a worker-only process alive until stop().
    timer = setTimeout(pump, Math.max(0, Math.min(delayMs, options.pollIntervalMs)));
  };

  // Completions of one group commit resolve in the same turn: coalescing their wake-ups into one
  // claim for every freed slot turned a burn-down's claims of 1, 1, 8 (a commit each) into one
  // claim of 10 (bench:queue: 3 commits per 10 deliveries before).
  let pumpRequested = false;
  function requestPump(): void {
    if (pumpRequested) return;
    pumpRequested = true;
    setImmediate(() => {
      pumpRequested = false;
      void pump();
    });
  }

  async function pump(): Promise<void> {
    if (stopping || !begun) return;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    let nextDelay = options.pollIntervalMs;
    try {
      do {
        pumpAgain = false;
        while (!stopping && inFlight.size < concurrency) {
          const free = concurrency - inFlight.size;
          // One lease length for the batch: the longest any of its handlers may need.
          const claimed = await store.claimDeliveries({
            workerId: id,
            limit: free,
            leaseMs: maxLeaseMs(),
            now: now(),
          });
          if (stopping) {
            // Claimed while stop() began: put back what will not be started, uncounted.
            await store.releaseDeliveries(
              id,
              claimed.map((d) => d.id),
              now(),
            );
            break;
          }
          // Destinations' flow control defers what may not run now (paused, limits, circuit).
          const runnable = forwarder ? await forwarder.admit(claimed) : claimed;
          for (const delivery of runnable) start(delivery);
          // Deferred work means a limit is reached: claim again when something finishes.
          if (claimed.length < free || runnable.length < claimed.length) break;
        }
      } while (pumpAgain && !stopping);
      if (inFlight.size < concurrency) {
        const seen = wakes;
        const due = await store.nextDueAt();
        if (due !== null) nextDelay = due - now();
        // Idle only if the answer is not older than the last delivery that ended: one that
        // ended during the query may have woken work the answer does not show.
        if (wakes !== seen) pumpAgain = true;
        else if (inFlight.size === 0 && (due === null || due > now())) {
          for (const resolve of idleWaiters.splice(0)) resolve();
        }
      }
    } catch (error) {
      options.metrics?.storeError("claim");
      log.error({ err: (error as Error).message }, "claiming failed; retrying shortly");
      nextDelay = Math.min(options.pollIntervalMs, 500);
    } finally {
      pumping = false;
    }
    if (pumpAgain) void pump();
    else schedule(nextDelay);
  }

  // One lease length for every claim: the longest any handler may need (handlers are fixed).
  const longestLeaseMs = Math.max(
    options.leaseMs,
    forwarder?.longestLeaseMs ?? 0,
    ...[...options.handlers.values()].map((h) => h.leaseMs),
  );
  const maxLeaseMs = () => longestLeaseMs;

  // Heartbeat: extend every lease we hold each third of the shortest lease; abort what we lost.
  const heartbeatMs = Math.max(
    50,
    Math.floor(
      Math.min(
        options.leaseMs,
        forwarder?.shortestLeaseMs ?? Number.POSITIVE_INFINITY,
        ...[...options.handlers.values()].map((h) => h.leaseMs),
      ) / 3,
    ),
  );
  const heartbeat = setInterval(() => {
    if (inFlight.size === 0) return;
    const ids = [...inFlight.keys()];
    store
      .extendLeases(id, ids, now() + maxLeaseMs())
      .then((held) => {
        const kept = new Set(held);
        for (const lost of ids) {
          const entry = inFlight.get(lost);
          if (entry && !kept.has(lost)) {
            log.warn({ deliveryId: lost }, "lease lost; aborting the handler's signal");
            entry.abort.abort(new Error("lease lost"));
          }
        }
      })
      .catch((error: unknown) => {
        options.metrics?.storeError("heartbeat");
        log.error({ err: (error as Error).message }, "lease heartbeat failed");
      });
  }, heartbeatMs);
  heartbeat.unref?.();

  // Rescue: leases that expired (a crashed worker anywhere) go back to pending.
  const rescue = setInterval(
    () => {
      store
        .rescueExpiredLeases(now())
        .then((rescued) => {
          if (rescued > 0) {
            options.metrics?.leasesRescued(rescued);
            log.warn({ rescued }, "rescued deliveries whose lease expired");
            void pump();
          }
        })
        .catch((error: unknown) => {
          options.metrics?.storeError("rescue");
          log.error({ err: (error as Error).message }, "lease rescue failed");
        });
      alertDeadLetters();
    },
    Math.max(100, Math.floor(options.leaseMs / 2)),
  );
  rescue.unref?.();

  // Alert outbox and thresholds: every poll interval, but no more often than 4 times a second.
  const alertTimer = options.alerts?.webhook
    ? setInterval(() => void sendAlerts(), Math.min(5_000, Math.max(250, options.pollIntervalMs)))
    : undefined;
  alertTimer?.unref?.();

  // Other processes' commits wake this worker where the store can tell (PostgreSQL NOTIFY).
  const unsubscribe = store.onDeliveries?.(() => {
    wakes++;
    requestPump();
  });

  const begin = () => {
    if (stopping) return;
    begun = true;
    void store
      .rescueExpiredLeases(now())
      .then((rescued) => {
        if (rescued > 0) options.metrics?.leasesRescued(rescued);
      })
      .catch(() => undefined);
    alertDeadLetters();
    void pump();
  };
  // A store that failed to migrate is reported by ready() and /readyz; the worker still polls.
  if (options.ready) options.ready.then(begin, begin);
  else begin();

  return {
    id,
    notify: () => {
      wakes++;
      requestPump();
    },
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        void pump();
      }),
    stats: () => ({ ...counts }),
    async stop(timeoutMs = 30_000) {
      if (stopping) return;
      stopping = true;
      unsubscribe?.();
      if (timer) clearTimeout(timer);
      clearInterval(heartbeat);
      clearInterval(rescue);
      if (alertTimer) clearInterval(alertTimer);
      idleWaiters = [];
      if (inFlight.size > 0) {
        let timeout: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => drained.push(resolve)),
          new Promise<void>((resolve) => {
            timeout = setTimeout(resolve, timeoutMs);
          }),
        ]);
        if (timeout) clearTimeout(timeout);
      }
      if (inFlight.size > 0) {
        log.warn(
          { inFlight: inFlight.size },
          "shutdown timeout: abandoning in-flight deliveries; their leases will expire",
        );
        for (const entry of inFlight.values()) entry.abort.abort(new Error("worker shutting down"));
      }
      // Wait for a claim in progress so nothing is leased after stop() resolves.
      while (pumping) await new Promise((resolve) => setTimeout(resolve, 5));
      await forwarder?.close().catch(() => undefined);
    },
  };
}
