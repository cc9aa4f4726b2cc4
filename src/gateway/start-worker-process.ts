import type { RetentionSchedule } from "../audit/retention-schedule.ts";
import type { HookinboxConfig } from "../config/index.ts";
import { createInbox, type Inbox, type InboxOptions } from "../inbox.ts";
import type { Worker } from "../queue/worker.ts";
import { type MetricsServer, startMetricsServer } from "./metrics-server.ts";

/** A worker-only process (`hookinbox start --role worker`): no HTTP listener. */
export interface WorkerProcess {
  readonly inbox: Inbox;
  readonly worker: Worker;
  /** The `/metrics` listener (`metrics.port`), or null. */
  readonly metrics: MetricsServer | null;
  /** The retention sweep (`retention`: payloads, events, receipts, rejected, dedup; hourly). */
  readonly retention: RetentionSchedule;
  /** Stops claiming, lets in-flight handlers finish (worker.shutdownTimeout), closes the store. */
  close(): Promise<void>;
}

/**
 * Starts a worker without ingest, for scaling processing apart from ingest on a shared store.
 *
 * @example
 * ```ts
 * const worker = await startWorkerProcess(config, { logger });
 * process.on("SIGTERM", () => worker.close());
 * ```
 */
export async function startWorkerProcess(
  config: unknown,
  options: InboxOptions = {},
): Promise<WorkerProcess> {
  // A config file is checked at run time (resolveConfig), not by its static type.
  const inbox = createInbox(config as HookinboxConfig, options);
  try {
    await inbox.ready();
  } catch (error) {
    await inbox.close().catch(() => undefined);
    throw error;
  }
  let metrics: MetricsServer | null = null;
  const { port, host } = inbox.config.metrics;
  try {
    if (port !== null && inbox.metrics) metrics = await startMetricsServer(inbox, host, port);
  } catch (error) {
    await inbox.close().catch(() => undefined);
    throw error;
  }
  // Retention (rejected receipts after 7 days and dedup keys after 35 by default; payloads,
  // events and receipts when configured), swept hourly; PostgreSQL partitions are made ahead.
  const retention = inbox.upkeep();
  const worker = inbox.startWorker();
  return {
    inbox,
    worker,
    metrics,
    retention,
    async close() {
      await retention.stop();
      await metrics?.close();
      await inbox.close();
    },
  };
}
