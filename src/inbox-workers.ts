import type { InboxMetrics } from "./admin/metrics.ts";
import type { ResolvedConfig } from "./config/index.ts";
import type { Resolver } from "./forward/address-guard.ts";
import { closeBusPublishers, openBusPublishers } from "./forward/bus/open-bus.ts";
import { createForwarder } from "./forward/forwarder.ts";
import type { Logger } from "./log.ts";
import { leasePlan } from "./queue/leases.ts";
import {
  type ProcessAvailableOptions,
  type ProcessAvailableResult,
  processAvailable,
} from "./queue/process-available.ts";
import { startWorker, type Worker } from "./queue/worker.ts";
import type { Store } from "./store/types.ts";
import { hookinboxTracer } from "./tracing/tracer.ts";

/** What an inbox's workers run with: its store, handlers, destinations and settings. */
export interface InboxWorkersOptions {
  readonly store: Store;
  readonly config: Pick<
    ResolvedConfig,
    "handlers" | "destinations" | "worker" | "alerts" | "route" | "tracing"
  >;
  readonly logger: Logger;
  readonly now: () => number;
  /** Settles once migrations have run (workers poll from then on, whatever the outcome). */
  readonly ready: Promise<unknown>;
  readonly metrics: InboxMetrics | null;
  /** Randomness for retry jitter (tests). */
  readonly random?: (() => number) | undefined;
  /** Resolves destination host names (tests). */
  readonly resolver?: Resolver | undefined;
}

/** The workers of one inbox, long-running and bounded, woken together and stopped together. */
export interface InboxWorkers {
  /** Starts a long-running worker (`inbox.startWorker`). */
  start(overrides?: { concurrency?: number; workerId?: string }): Worker;
  /** A bounded run (`inbox.processAvailable`): its worker is woken and stopped with the others while it runs. */
  processAvailable(options?: ProcessAvailableOptions): Promise<ProcessAvailableResult>;
  /** Wakes every worker of this inbox (work became due in this process). */
  notify(): void;
  /** Stops every worker, each up to `worker.shutdownTimeoutMs`. */
  stop(): Promise<void>;
}

/**
 * The workers of one inbox: each runs its handlers and, when destinations are configured,
 * forwards to them.
 *
 * @example
 * ```ts
 * const workers = inboxWorkers({ store, config: resolved, logger, now, ready: migrated, metrics });
 * workers.start({ concurrency: 4 });
 * await workers.stop();
 * ```
 */
export function inboxWorkers(options: InboxWorkersOptions): InboxWorkers {
  const { store, config, logger, now, metrics, random, resolver } = options;
  const workers = new Set<Worker>();
  const leaseWarning = { warned: false };
  // One connection per queue destination for the whole process, opened on first publish.
  const publishers = openBusPublishers(config.destinations, logger);
  const destinationLeases = Object.fromEntries(
    [...config.destinations.values()].map((d) => [d.name, d.leaseMs]),
  );
  const newWorker = (overrides: {
    concurrency?: number;
    workerId?: string;
    bounded?: { eventIds?: readonly string[] };
  }) =>
    startWorker({
      store,
      handlers: config.handlers,
      logger,
      concurrency: overrides.concurrency ?? config.worker.concurrency,
      leaseMs: config.worker.leaseMs,
      pollIntervalMs: config.worker.pollIntervalMs,
      alerts: config.alerts,
      ready: options.ready,
      ...(metrics ? { metrics } : {}),
      now,
      ...(random ? { random } : {}),
      ...(overrides.workerId ? { workerId: overrides.workerId } : {}),
      ...(overrides.bounded ? { bounded: overrides.bounded } : {}),
      ...(config.tracing.enabled ? { tracer: hookinboxTracer() } : {}),
      ...(config.destinations.size > 0
        ? {
            forwarder: (workerId: string) =>
              createForwarder({
                store,
                destinations: config.destinations,
                workerId,
                logger,
                alerts: config.alerts,
                now,
                random: random ?? Math.random,
                publishers,
                ...(resolver ? { resolver } : {}),
                routeTransform: config.route.transformFor,
              }),
          }
        : {}),
    });
  return {
    start(overrides = {}) {
      const worker = newWorker(overrides);
      workers.add(worker);
      return worker;
    },
    processAvailable(processOptions = {}) {
      let bounded: Worker | undefined;
      return processAvailable(
        {
          store,
          now,
          logger,
          defaultConcurrency: config.worker.concurrency,
          leases: leasePlan(config.worker.leaseMs, config.handlers, destinationLeases),
          ready: options.ready,
          startWorker: (overrides) => {
            bounded = newWorker(overrides);
            // Accepts in this process wake it while it runs; close() stops it.
            workers.add(bounded);
            return bounded;
          },
          leaseWarning,
        },
        processOptions,
      ).finally(() => {
        if (bounded) workers.delete(bounded);
      });
    },
    notify() {
      for (const worker of workers) worker.notify();
    },
    async stop() {
      await Promise.all([...workers].map((w) => w.stop(config.worker.shutdownTimeoutMs)));
      await closeBusPublishers(publishers);
    },
  };
}
