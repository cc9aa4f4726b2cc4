import type { AdminHost } from "./admin/admin-host.ts";
import { closeEventStreams } from "./admin/event-stream-hub.ts";
import { createInboxMetrics, storeCommitsOf } from "./admin/metrics.ts";
import { assertAdminTokens } from "./admin/token-strength.ts";
import { sequenceAll } from "./audit/sequencer.ts";
import { type HookinboxConfig, resolveConfig } from "./config/index.ts";
import { hookinboxError } from "./errors.ts";
import { configuredDestinations } from "./forward/destination-admin.ts";
import { previewTarget } from "./forward/transform-preview.ts";
import { createRouter, type RouterHost } from "./inbox-router.ts";
import type { Inbox, InboxOptions } from "./inbox-types.ts";
import { auditHeadsOf, inboxUpkeep } from "./inbox-upkeep.ts";
import { inboxWorkers } from "./inbox-workers.ts";
import { createReadiness } from "./ingest/readiness.ts";
import { createRejectLimiter } from "./ingest/reject-limiter.ts";
import { silentLogger } from "./log.ts";
import { retryDelivery, retryMany } from "./operations/deliveries.ts";
import type { OperationContext } from "./operations/operation.ts";
import {
  planReplayMatching,
  replayMatching,
  replayStoredEvent,
} from "./operations/replay-policy.ts";
import { openStore } from "./store/open-store.ts";
import { hookinboxTracer } from "./tracing/tracer.ts";

export type { Inbox, InboxOptions } from "./inbox-types.ts";

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
  assertAdminTokens(adminToken, resolved.admin.readToken);
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
  const audit = auditHeadsOf({ store, config: resolved, now, logger });
  const metrics = resolved.metrics.enabled
    ? createInboxMetrics(() => store.queueGauges(), now, storeCommitsOf(store))
    : null;
  const migrated = store
    .migrate()
    .then(() => store.ensureDestinations([...resolved.destinations.keys()]));
  migrated.catch(() => undefined); // Surfaced by ready() and as 503s, never unhandled.
  const workers = inboxWorkers({
    store,
    config: resolved,
    logger,
    now,
    ready: migrated,
    metrics,
    random: options.random,
    resolver: options.resolver,
  });
  const upkeep = inboxUpkeep({ store, config: resolved, now, logger, migrated });
  const route = resolved.route;
  const readiness = createReadiness({ ping: () => store.ping(), now: Date.now });
  const ingest: RouterHost["ingest"] = {
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
    ...(resolved.tracing.enabled ? { tracer: hookinboxTracer() } : {}),
    onDeliveries: () => workers.notify(),
  };
  let closed = false;
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
    previewTarget: async (target, event) => {
      const destination = resolved.destinations.get(target);
      return destination ? previewTarget(destination, route.transformFor, event) : null;
    },
  };
  // What admin/* sees of this inbox (src/admin/admin-host.ts); one object, so sessions last.
  const admin: AdminHost = { config: resolved, now, ready: () => migrated, operations, metrics };
  const router = createRouter({
    ingest,
    migrated,
    isClosed: () => closed,
    admin,
    adminToken,
  });

  const inbox: Inbox = {
    config: resolved,
    store,
    logger,
    now,
    metrics,
    audit,
    ready: () => migrated,
    ...router,
    upkeep: () => upkeep.start(),
    startWorker(overrides = {}) {
      inbox.upkeep();
      return workers.start(overrides);
    },
    async processAvailable(processOptions) {
      if (closed) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
      // No sequencer outlives the call: the leaves accepted so far are appended here, once.
      if (resolved.audit.enabled) {
        await migrated;
        await sequenceAll(store);
      }
      return workers.processAvailable(processOptions);
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
    operations,
    endStreams: () => closeEventStreams(admin),
    async close() {
      if (closed) return;
      closed = true;
      closeEventStreams(admin);
      await workers.stop();
      await upkeep.stop();
      await audit?.stop();
      await migrated.catch(() => undefined);
      await store.close();
    },
  };
  return inbox;
}
