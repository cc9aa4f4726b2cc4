import { handleAdmin } from "./admin/admin-api.ts";
import { isApiUrl, withApiHeaders } from "./admin/api-headers.ts";
import { isDashboardPath, serveDashboard } from "./admin/dashboard-assets.ts";
import { createInboxMetrics } from "./admin/metrics.ts";
import { assertStrongAdminToken } from "./admin/token-strength.ts";
import { auditKeyFile, loadAuditKey } from "./audit/audit-key.ts";
import { type RetentionSchedule, startRetention } from "./audit/retention-schedule.ts";
import { type AuditSequencer, sequenceAll, startAuditSequencer } from "./audit/sequencer.ts";
import { treeHeads } from "./audit/tree-heads.ts";
import { type HookinboxConfig, resolveConfig } from "./config/index.ts";
import { hookinboxError, isHookinboxError } from "./errors.ts";
import { configuredDestinations } from "./forward/destination-admin.ts";
import { createForwarder } from "./forward/forwarder.ts";
import { ulid } from "./ids.ts";
import type { Inbox, InboxOptions } from "./inbox-types.ts";
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
import { silentLogger } from "./log.ts";
import { retryDelivery, retryMany } from "./operations/deliveries.ts";
import type { OperationContext } from "./operations/operation.ts";
import {
  planReplayMatching,
  replayMatching,
  replayStoredEvent,
} from "./operations/replay-policy.ts";
import { leasePlan } from "./queue/leases.ts";
import { processAvailable } from "./queue/process-available.ts";
import { startWorker, type Worker, type WorkerOptions } from "./queue/worker.ts";
import { openStore } from "./store/open-store.ts";
import type { SqliteStore } from "./store/sqlite/sqlite-store.ts";
import type { Store } from "./store/types.ts";

export type { Inbox, InboxOptions } from "./inbox-types.ts";

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
        { host: inbox, token: adminToken, remoteAddress: request.remoteAddress ?? null },
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
    async replay(eventId, replayOptions) {
      await migrated;
      return replayStoredEvent(operations, eventId, replayOptions);
    },
    async replayWhere(filter, replayOptions) {
      await migrated;
      return replayMatching(operations, filter, replayOptions);
    },
    async planReplayWhere(filter, planOptions) {
      await migrated;
      return planReplayMatching(operations, filter, planOptions);
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
    routing: {
      handlers: [...resolved.handlers.keys()],
      destinations: [...resolved.destinations.keys()],
      route,
    },
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
