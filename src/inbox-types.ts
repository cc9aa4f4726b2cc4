import type { InboxMetrics } from "./admin/metrics.ts";
import type { RetentionSchedule } from "./audit/retention-schedule.ts";
import type { TreeHeads } from "./audit/tree-heads.ts";
import type { ResolvedConfig } from "./config/index.ts";
import type { Resolver } from "./forward/address-guard.ts";
import type { InboxRequest, InboxResponse } from "./ingest/request.ts";
import type { Logger } from "./log.ts";
import type { OperationContext } from "./operations/operation.ts";
import type { Replayer } from "./operations/replay-policy.ts";
import type { BulkRetryResult } from "./operations/retry-deliveries.ts";
import type { KeyFetcher } from "./providers/keys/index.ts";
import type { ProcessAvailableOptions, ProcessAvailableResult } from "./queue/process-available.ts";
import type { Worker } from "./queue/worker.ts";
import type { DeliveryView } from "./store/queue-types.ts";
import type { Store } from "./store/types.ts";

/** Options that are not part of the config file. */
export interface InboxOptions {
  /** Environment for `{ env }` secrets and `DATABASE_URL` (default `process.env`). */
  readonly env?: Record<string, string | undefined>;
  /** A logger (default: silent for the library; the gateway passes its pino logger). */
  readonly logger?: Logger;
  /** A store to use instead of opening `config.store`. */
  readonly store?: Store;
  /** The clock, in ms since the epoch (tests). */
  readonly now?: () => number;
  /** Randomness for retry jitter (tests). */
  readonly random?: () => number;
  /**
   * Where an SQLite store writes: `inline` (default for the library) or `thread` (a writer
   * thread, so commits never block the event loop; `hookinbox start` uses it).
   */
  readonly sqliteWriter?: "inline" | "thread";
  /** Overrides `admin.token` (the gateway passes a generated one). */
  readonly adminToken?: string | null;
  /**
   * Fetches providers' public keys for SNS, Pub/Sub, Plaid and PayPal sources (default: HTTPS
   * with Node's `fetch`). Tests pass one that answers from memory.
   */
  readonly keyFetcher?: KeyFetcher;
  /**
   * Resolves destination host names (default: the system resolver). The SSRF guard checks
   * whatever it answers, on the address the socket connects to (tests pass their own).
   */
  readonly resolver?: Resolver;
}

/** An inbox: ingest, processing, replay, the admin API and health checks. */
export interface Inbox extends Replayer {
  readonly config: ResolvedConfig;
  readonly store: Store;
  /**
   * The logger the inbox was created with (silent by default): host adapters log what they run
   * after a response through it. Never given request bodies or secrets.
   */
  readonly logger: Logger;
  /** The inbox's clock (ms since the epoch). */
  now(): number;
  /** Resolves once migrations have run; `handle` waits for it by itself. */
  ready(): Promise<void>;
  /**
   * Routes one request: `POST /webhooks/:source`, `/api/…`, `GET /healthz`, `GET /readyz`.
   * Never throws.
   */
  handle(request: InboxRequest): Promise<InboxResponse>;
  /**
   * The answer to an unexpected error (a bug): 500 `HOOKINBOX_INTERNAL_ERROR` with a request id,
   * logged under the same id. Host adapters use it for failures of their own; with the request's
   * `url`, an `/api` answer gets the API's headers like every other (`no-store`, `nosniff`).
   */
  internalError(
    error: unknown,
    request: Pick<InboxRequest, "method"> & { readonly url?: string },
  ): InboxResponse;
  /** Ingest for a source named by the host (for frameworks that route by themselves). */
  handleWebhook(source: string, request: InboxRequest): Promise<InboxResponse>;
  /**
   * Starts a worker that runs the configured handlers (the gateway starts one by itself), and
   * with it this inbox's upkeep (see `upkeep`).
   */
  startWorker(overrides?: { concurrency?: number; workerId?: string }): Worker;
  /**
   * Processes what is due for a bounded time, then returns (serverless hosts, cron): claims due
   * deliveries (handlers and destinations), runs up to `concurrency` at a time, stops claiming at
   * `maxMs` (default 10 s), lets running handlers finish for `graceMs` more (default 5 s) and puts
   * back what it claimed but did not start. On PostgreSQL with the audit log on, it first appends
   * the leaves pending so far (no sequencer runs here). Starts nothing that outlives the call (no
   * LISTEN, no upkeep, no timers): a process may exit without `close()`. Every lease must be longer than
   * `maxMs + graceMs` and than the host's maximum function duration (warned once otherwise).
   *
   * @example
   * ```ts
   * const { done, remaining } = await inbox.processAvailable({ maxMs: 50_000 });
   * ```
   */
  processAvailable(options?: ProcessAvailableOptions): Promise<ProcessAvailableResult>;
  /**
   * The upkeep every `hookinbox start` process runs, started on first call (once per inbox;
   * `startWorker` calls it): retention swept once migrations have run and then hourly, and on
   * PostgreSQL the day partitions from yesterday to a week ahead and the audit log's sequencer
   * (src/audit/sequencer.ts: one lease holder across processes appends accepted leaves within
   * `audit.maxMergeDelay`). `retention.sweep: false` leaves only `sweep()` on demand. Stopped by
   * `close()`.
   */
  upkeep(): RetentionSchedule;
  /**
   * Runs a delivery now: a dead one goes back with a fresh attempt budget, a pending one (waiting
   * for its next backoff step) is due now, a blocked one has the delivery blocking its ordering
   * key run now. HOOKINBOX_DELIVERY_NOT_RETRYABLE when it is running or finished.
   */
  retryDelivery(deliveryId: string): Promise<DeliveryView>;
  /**
   * Runs several deliveries now (see `retryDelivery`), skipping those no longer waiting.
   * HOOKINBOX_UNSAFE_TO_REPROCESS, before anything runs, when a runbook says one of their event
   * types is not safe to reprocess and `override` is not set.
   */
  retryDeliveries(
    deliveryIds: readonly string[],
    options?: { override?: boolean; onProgress?: (done: number) => void },
  ): Promise<BulkRetryResult>;
  /**
   * Prometheus metrics (null when `metrics.enabled` is false). Mount `metrics.render()` wherever
   * your app serves `/metrics`; the gateway serves it on `metrics.port` and at `/api/metrics`.
   */
  readonly metrics: InboxMetrics | null;
  /**
   * Signed tree heads of the audit log (null when `audit.enabled` is false). The gateway signs
   * on `audit.headInterval`; a library host calls `audit.signNow()` when it wants a head.
   */
  readonly audit: TreeHeads | null;
  /**
   * What admin operations (`hookinbox/operations`) run against in this inbox: its store, clock,
   * runbooks, destinations, replay routing and audit heads; operations that make work due wake
   * this process's workers.
   */
  readonly operations: OperationContext;
  /** Ends the open event streams (`/api/events/stream`): the gateway's shutdown, before it drains. */
  endStreams(): void;
  /** Stops workers (up to their shutdown timeout) and closes the store. */
  close(): Promise<void>;
}
