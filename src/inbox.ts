import { handleAdmin } from "./admin/admin-api.ts";
import { isApiUrl, withApiHeaders } from "./admin/api-headers.ts";
import { isDashboardPath, serveDashboard } from "./admin/dashboard-assets.ts";
import { createInboxMetrics, type InboxMetrics } from "./admin/metrics.ts";
import { assertStrongAdminToken } from "./admin/token-strength.ts";
import { auditKeyFile, loadAuditKey } from "./audit/audit-key.ts";
import { type RetentionSchedule, startRetention } from "./audit/retention-schedule.ts";
import { type AuditSequencer, sequenceAll, startAuditSequencer } from "./audit/sequencer.ts";
import { type TreeHeads, treeHeads } from "./audit/tree-heads.ts";
import { type HookinboxConfig, type ResolvedConfig, resolveConfig } from "./config/index.ts";
import { hookinboxError, isHookinboxError } from "./errors.ts";
import type { Resolver } from "./forward/address-guard.ts";
import { configuredDestinations } from "./forward/destination-admin.ts";
import { createForwarder } from "./forward/forwarder.ts";
import { ulid } from "./ids.ts";
import { acceptWebhook, type IngestContext, unknownSourceLabel } from "./ingest/accept-webhook.ts";
import { readHeaders } from "./ingest/headers.ts";
import { createReadiness } from "./ingest/readiness.ts";
import { createRejectLimiter } from "./ingest/reject-limiter.ts";
import {
  errorResponse,
  type InboxRequest,
  type InboxResponse,
  jsonResponse,
} from "./ingest/request.ts";
import { parseRequestTarget } from "./ingest/request-target.ts";
import { type Logger, silentLogger } from "./log.ts";
import { type BulkPlan, bulkPlan } from "./operations/bulk-scope.ts";
import { retryDelivery, retryMany } from "./operations/deliveries.ts";
import type { OperationContext } from "./operations/operation.ts";
import type { BulkRetryResult } from "./operations/retry-deliveries.ts";
import type { KeyFetcher } from "./providers/keys/index.ts";
import { leasePlan } from "./queue/leases.ts";
import {
  type ProcessAvailableOptions,
  type ProcessAvailableResult,
  processAvailable,
} from "./queue/process-available.ts";
import { startWorker, type Worker, type WorkerOptions } from "./queue/worker.ts";
import { openStore } from "./store/open-store.ts";
import type { DeliveryView, ReplayFilter } from "./store/queue-types.ts";
import type { SqliteStore } from "./store/sqlite/sqlite-store.ts";
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
export interface Inbox {
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
  /** Re-delivers a stored event: new deliveries flagged `isReplay`; the originals stay as they are. */
  replay(eventId: string, options?: { targets?: readonly string[] }): Promise<DeliveryView[]>;
  /** Replays every event matching a filter, in bounded batches. */
  replayWhere(
    filter: ReplayFilter,
    options?: { targets?: readonly string[]; onProgress?: (eventsDone: number) => void },
  ): Promise<{ events: number; deliveries: number }>;
  /** What `replayWhere` would create (events, deliveries per target), counted in SQL; changes nothing. */
  planReplayWhere(
    filter: ReplayFilter,
    options?: { targets?: readonly string[] },
  ): Promise<BulkPlan>;
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
  /** Stops workers (up to their shutdown timeout) and closes the store. */
  close(): Promise<void>;
}

/** The message and code of anything thrown, for a log line (never a body or a secret). */
function describeError(error: unknown): { message: string; code: string | undefined } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { message: error.message, code: typeof code === "string" ? code : undefined };
  }
  return { message: String(error), code: undefined };
}

/**
 * Creates an inbox from a config object (typed as `HookinboxConfig`, so no `defineConfig` is
 * needed; a config read from JSON is checked the same way at run time). The store is opened at
 * once and migrated before the first request is handled.
 *
 * @example
 * ```ts
 * const inbox = createInbox({
 *   sources: { stripe: stripe({ secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] }) },
 *   handlers: { "stripe:invoice.paid": async (event, ctx) => { … } },
 * });
 * inbox.startWorker();
 * const response = await inbox.handle({ method: "POST", url: "/webhooks/stripe", headers, body });
 * ```
 */
export function createInbox(config: HookinboxConfig, options: InboxOptions = {}): Inbox {
  const resolved = resolveConfig(
    config,
    options.env ?? process.env,
    options.keyFetcher ? { keyFetcher: options.keyFetcher } : {},
  );
  // A weak admin token is refused before anything opens.
  const adminToken = options.adminToken !== undefined ? options.adminToken : resolved.admin.token;
  if (adminToken !== null) assertStrongAdminToken(adminToken);
  const logger = options.logger ?? silentLogger();
  const store =
    options.store ??
    openStore(resolved.store, {
      logger,
      ...(options.sqliteWriter ? { writer: options.sqliteWriter } : {}),
      ...(options.now ? { now: options.now } : {}),
      audit: resolved.audit.enabled,
    });
  const now = options.now ?? Date.now;
  const audit = resolved.audit.enabled
    ? treeHeads({
        store,
        now,
        witness: resolved.audit.witness,
        logger,
        key: () => {
          const loaded = loadAuditKey(
            resolved.audit.key,
            auditKeyFile(resolved.store, process.cwd()),
          );
          if (loaded.generated)
            logger.info({ file: loaded.from }, "generated the audit signing key");
          return loaded.key;
        },
      })
    : null;
  const metrics = resolved.metrics.enabled
    ? createInboxMetrics(() => store.queueGauges(), now, storeCommitsOf(store))
    : null;
  const migrated = store
    .migrate()
    .then(() => store.ensureDestinations([...resolved.destinations.keys()]));
  migrated.catch(() => {
    // Surfaced by ready() and as 503s; never an unhandled rejection.
  });
  const workers = new Set<Worker>();
  let upkeep: RetentionSchedule | null = null;
  let sequencer: AuditSequencer | null = null;
  const afterMigrations =
    <A extends unknown[], R>(run: (...args: A) => Promise<R>) =>
    async (...args: A) => {
      await migrated;
      return run(...args);
    };
  const route = resolved.route;
  const empty = new Uint8Array(0);
  const isTarget = (name: string) => resolved.handlers.has(name) || resolved.destinations.has(name);
  const readiness = createReadiness({ ping: () => store.ping(), now: Date.now });
  const ingest: IngestContext = {
    readiness,
    sources: resolved.sources,
    store,
    logger,
    now,
    bodyLimit: resolved.http.bodyLimit,
    route,
    trustedProxies: resolved.http.trustedProxies,
    rejectLimiter: createRejectLimiter(resolved.http.rejectLimit),
    maxHops: resolved.http.maxHops,
    ...(metrics ? { metrics } : {}),
    onDeliveries: () => {
      for (const worker of workers) worker.notify();
    },
  };
  let closed = false;
  const leaseWarning = { warned: false };
  const destinationLeases = Object.fromEntries(
    [...resolved.destinations.values()].map((d) => [d.name, d.leaseMs]),
  );
  /** A worker with this inbox's handlers, destinations and settings. */
  const newWorker = (
    overrides: { concurrency?: number; workerId?: string } & Pick<WorkerOptions, "bounded">,
  ) =>
    startWorker({
      store,
      handlers: resolved.handlers,
      logger,
      concurrency: overrides.concurrency ?? resolved.worker.concurrency,
      leaseMs: resolved.worker.leaseMs,
      pollIntervalMs: resolved.worker.pollIntervalMs,
      alerts: resolved.alerts,
      ready: migrated,
      ...(metrics ? { metrics } : {}),
      now,
      ...(options.random ? { random: options.random } : {}),
      ...(overrides.workerId ? { workerId: overrides.workerId } : {}),
      ...(overrides.bounded ? { bounded: overrides.bounded } : {}),
      ...(resolved.destinations.size > 0
        ? {
            forwarder: (workerId: string) =>
              createForwarder({
                store,
                destinations: resolved.destinations,
                workerId,
                logger,
                alerts: resolved.alerts,
                now,
                random: options.random ?? Math.random,
                ...(options.resolver ? { resolver: options.resolver } : {}),
              }),
          }
        : {}),
    });

  const unavailable = (error: unknown) => {
    const e =
      isHookinboxError(error) && error.status === 503
        ? error
        : hookinboxError("HOOKINBOX_STORE_UNAVAILABLE");
    return errorResponse(e.status, e.code, e.message);
  };

  const checkTargets = (targets: readonly string[]) => {
    for (const target of targets) {
      if (!isTarget(target)) {
        throw hookinboxError(
          "HOOKINBOX_UNKNOWN_TARGET",
          `"${target}" (handlers: ${[...resolved.handlers.keys()].join(", ") || "none"}; destinations: ${[...resolved.destinations.keys()].join(", ") || "none"})`,
        );
      }
    }
  };

  /**
   * The one place an answer leaves the inbox (`handle` and `internalError` both end here): every
   * `/api` answer, errors included, gets `Cache-Control: no-store` and `nosniff`.
   */
  const finish = (request: { readonly url?: string }, response: InboxResponse) =>
    request.url !== undefined && isApiUrl(request.url) ? withApiHeaders(response) : response;

  /** A bug, not the sender's fault: a 500 with a request id the log line carries too. */
  const internalError: Inbox["internalError"] = (error, request) => {
    const requestId = ulid();
    const { message, code } = describeError(error);
    logger.error(
      { requestId, method: request.method, err: { message, code } },
      "request failed with an internal error",
    );
    const internal = hookinboxError("HOOKINBOX_INTERNAL_ERROR", `request id ${requestId}`);
    return finish(
      request,
      jsonResponse(internal.status, {
        error: { code: internal.code, message: internal.message, requestId },
      }),
    );
  };

  const handleWebhook = async (source: string, request: InboxRequest): Promise<InboxResponse> => {
    if (!metrics) return ingestWebhook(source, request);
    const started = performance.now();
    const response = await ingestWebhook(source, request);
    metrics.request(
      resolved.sources.has(source) ? source : unknownSourceLabel,
      (performance.now() - started) / 1000,
    );
    return response;
  };

  const ingestWebhook = async (source: string, request: InboxRequest): Promise<InboxResponse> => {
    if (closed) return unavailable(hookinboxError("HOOKINBOX_STORE_CLOSED"));
    try {
      await migrated;
    } catch (error) {
      return unavailable(error);
    }
    try {
      return await acceptWebhook(ingest, source, request);
    } catch (error) {
      return internalError(error, request);
    }
  };

  const routeRequest = async (request: InboxRequest): Promise<InboxResponse> => {
    const target = parseRequestTarget(request.url);
    if (target.kind === "invalid") {
      const invalid = hookinboxError("HOOKINBOX_REQUEST_TARGET_INVALID", target.detail);
      return errorResponse(invalid.status, invalid.code, invalid.message);
    }
    if (target.kind === "webhook") return handleWebhook(target.source, request);
    if (request.bodyError) {
      return errorResponse(
        request.bodyError.status,
        request.bodyError.code,
        request.bodyError.message,
      );
    }
    const { pathname } = target;
    if (pathname === "/healthz") return jsonResponse(200, { ok: true });
    if (pathname === "/readyz") {
      try {
        if (closed) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
        await migrated;
        const result = await readiness.check();
        if (!result.ok) throw result.error;
        return jsonResponse(200, { ok: true, store: store.kind });
      } catch (error) {
        return unavailable(error);
      }
    }
    if (pathname === "/api" || pathname.startsWith("/api/")) {
      return handleAdmin(
        { inbox, token: adminToken, remoteAddress: request.remoteAddress ?? null },
        request.method.toUpperCase(),
        new URL(`http://hookinbox.invalid${pathname}${target.search}`),
        readHeaders(request.headers),
        request.body,
      );
    }
    // The dashboard's page and assets (src/admin/dashboard-assets.ts); its data is under /api.
    if ((request.method === "GET" || request.method === "HEAD") && isDashboardPath(pathname)) {
      if (adminToken === null) {
        const disabled = hookinboxError("HOOKINBOX_ADMIN_DISABLED");
        return errorResponse(disabled.status, disabled.code, disabled.message);
      }
      return serveDashboard(pathname);
    }
    const notFound = hookinboxError("HOOKINBOX_ROUTE_NOT_FOUND");
    return errorResponse(notFound.status, notFound.code, notFound.message);
  };

  const inbox: Inbox = {
    config: resolved,
    store,
    logger,
    now,
    metrics,
    audit,
    ready: () => migrated,
    internalError,
    handleWebhook,
    async handle(request) {
      try {
        return finish(request, await routeRequest(request));
      } catch (error) {
        // internalError ends in finish itself.
        return internalError(error, request);
      }
    },
    upkeep() {
      // One wrapper for both: retention sequences first, the sequencer sequences on its tick.
      const auditSequence = afterMigrations((limit: number) => store.auditSequence(limit));
      upkeep ??= startRetention({
        store: {
          purgePayloads: afterMigrations((input) => store.purgePayloads(input)),
          retentionStep: afterMigrations((input) => store.retentionStep(input)),
          maintainPartitions: afterMigrations((at) => store.maintainPartitions(at)),
          auditSequence,
        },
        windows: resolved.retention,
        now,
        logger,
        scheduled: resolved.retention.sweep,
      });
      if (resolved.audit.enabled && store.kind === "postgres") {
        sequencer ??= startAuditSequencer({
          store: {
            auditSequence,
            auditSequencerLease: afterMigrations((holder, ttlMs) =>
              store.auditSequencerLease(holder, ttlMs),
            ),
          },
          maxMergeDelayMs: resolved.audit.maxMergeDelayMs,
          logger,
        });
      }
      return upkeep;
    },
    startWorker(overrides = {}) {
      inbox.upkeep();
      const worker = newWorker(overrides);
      workers.add(worker);
      return worker;
    },
    async processAvailable(processOptions = {}) {
      if (closed) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
      let bounded: Worker | undefined;
      // No sequencer outlives the call: the leaves accepted so far are appended here, once.
      if (resolved.audit.enabled) {
        await migrated;
        await sequenceAll(store);
      }
      return processAvailable(
        {
          store,
          now,
          logger,
          defaultConcurrency: resolved.worker.concurrency,
          leases: leasePlan(resolved.worker.leaseMs, resolved.handlers, destinationLeases),
          ready: migrated,
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
    async replay(eventId, replayOptions = {}) {
      await migrated;
      let targets = replayOptions.targets;
      if (targets === undefined) {
        const event = await store.getEvent(eventId);
        if (!event) throw hookinboxError("HOOKINBOX_EVENT_NOT_FOUND", eventId);
        const previous = [...new Set(event.deliveries.map((d) => d.target))].filter(isTarget);
        targets = previous.length > 0 ? previous : route(event.source, event.type, event.body);
      }
      checkTargets(targets);
      const created = await store.replayEvent({ eventId, targets, now: now() });
      ingest.onDeliveries();
      return created;
    },
    async replayWhere(filter, replayOptions = {}) {
      await migrated;
      if (replayOptions.targets) checkTargets(replayOptions.targets);
      const fixed = replayOptions.targets;
      const result = await store.replayWhere(filter, {
        now: now(),
        // Bulk replays route by source and type: a route with `where` needs explicit targets.
        targetsFor: (event) => fixed ?? route(event.source, event.type, empty),
        ...(replayOptions.onProgress ? { onProgress: replayOptions.onProgress } : {}),
      });
      ingest.onDeliveries();
      return result;
    },
    async planReplayWhere(filter, planOptions = {}) {
      await migrated;
      if (planOptions.targets) checkTargets(planOptions.targets);
      const fixed = planOptions.targets;
      // Routing reads source and type only, so each (source, type) group is routed once.
      const kinds = await store.countEventKinds(filter);
      return bulkPlan(
        kinds.reduce((sum, k) => sum + k.events, 0),
        kinds.flatMap((k) =>
          (fixed ?? route(k.source, k.type, empty)).map((target) => ({
            target,
            deliveries: k.events,
          })),
        ),
      );
    },
    async retryDelivery(deliveryId) {
      await migrated;
      return retryDelivery.run(inbox.operations, { id: deliveryId });
    },
    async retryDeliveries(deliveryIds, retryOptions = {}) {
      await migrated;
      const progress = retryOptions.onProgress;
      return retryMany(
        {
          ...inbox.operations,
          ...(progress ? { onProgress: (done: number) => progress(done) } : {}),
        },
        [...new Set(deliveryIds)],
        retryOptions.override === true,
      );
    },
    get operations(): OperationContext {
      return operations;
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...workers].map((w) => w.stop(resolved.worker.shutdownTimeoutMs)));
      await upkeep?.stop();
      await sequencer?.stop();
      await audit?.stop();
      await migrated.catch(() => undefined);
      await store.close();
    },
  };
  const operations: OperationContext = {
    store,
    runbooks: resolved.runbooks,
    sources: [...resolved.sources.keys()],
    destinations: configuredDestinations(resolved.destinations),
    now,
    replayer: inbox,
    audit,
    wake: () => ingest.onDeliveries(),
  };
  return inbox;
}

/** The SQLite store's commit counter (what `hookinbox_store_commits_total` reports), else none. */
function storeCommitsOf(store: Store): (() => number) | undefined {
  const stats = (store as Partial<SqliteStore>).stats;
  return store.kind === "sqlite" && stats ? () => stats.call(store).commits : undefined;
}
