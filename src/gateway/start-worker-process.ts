import type { HookinboxConfig } from "../config/index.ts";
import { createInbox, type Inbox, type InboxOptions } from "../inbox.ts";
import { type RejectionRetention, startRejectionRetention } from "../ingest/rejection-retention.ts";
import type { Worker } from "../queue/worker.ts";
import { type MetricsServer, startMetricsServer } from "./metrics-server.ts";

/** A worker-only process (`hookinbox start --role worker`): no HTTP listener. */
export interface WorkerProcess {
  readonly inbox: Inbox;
  readonly worker: Worker;
  /** The `/metrics` listener (`metrics.port`), or null. */
  readonly metrics: MetricsServer | null;
  /** The retention sweep of rejected receipts (`http.rejectedRetention`, hourly). */
  readonly retention: RejectionRetention;
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
  // Rejected receipts are kept for http.rejectedRetention (default 7 days), swept hourly.
  const retention = startRejectionRetention({
    store: inbox.store,
    retentionMs: inbox.config.http.rejectedRetentionMs,
    now: inbox.now,
    ...(options.logger ? { logger: options.logger } : {}),
  });
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
