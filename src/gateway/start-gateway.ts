import { createServer, type Server } from "node:http";
import type { Duplex } from "node:stream";
import { Counter } from "prom-client";
import { toNodeListener } from "../adapters/node.ts";
import type { RetentionSchedule } from "../audit/retention-schedule.ts";
import type { HookinboxConfig } from "../config/index.ts";
import { refuseOwnWebhookDestinations } from "../forward/own-webhooks.ts";
import { createInbox, type Inbox, type InboxOptions } from "../inbox.ts";
import type { Worker } from "../queue/worker.ts";
import { type ConnectionGuard, guardConnections } from "./connection-guard.ts";
import { listen } from "./listen.ts";
import { type MetricsServer, startMetricsServer } from "./metrics-server.ts";
import { answerClientError, rawErrorAnswer } from "./raw-answers.ts";

/** A running gateway: the inbox behind a `node:http` server. */
export interface Gateway {
  readonly inbox: Inbox;
  /** The worker running in-process handlers, when any are configured. */
  readonly worker: Worker | null;
  readonly server: Server;
  /** e.g. `http://127.0.0.1:8080` */
  readonly url: string;
  /** The separate `/metrics` listener (`metrics.port`), or null. */
  readonly metrics: MetricsServer | null;
  /** The retention sweep (`retention`: payloads, events, receipts, rejected, dedup; hourly). */
  readonly retention: RetentionSchedule;
  /** Open connections and what the connection cap did. */
  readonly connections: ConnectionGuard;
  /**
   * Stops accepting connections, closes idle ones, gives requests in progress up to
   * `http.drainTimeout`, closes what is left, then closes the inbox (workers get
   * `worker.shutdownTimeout`) and the store.
   */
  close(): Promise<void>;
}

/**
 * Stops a server gracefully: no new connections, idle ones closed now, busy ones closed after
 * their response or at the deadline, whichever comes first.
 */
function drainServer(server: Server, deadlineMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const deadline = setTimeout(() => server.closeAllConnections(), deadlineMs);
    // A keep-alive connection whose response just finished is idle: close it at once rather
    // than after keepAliveTimeout.
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    server.close(() => {
      clearTimeout(deadline);
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * Starts the gateway: a thin `node:http` host over `createInbox`. Migrations run before it listens.
 *
 * @example
 * ```ts
 * const gateway = await startGateway(config, { port: 0 });
 * console.log(gateway.url);
 * ```
 */
export async function startGateway(
  config: unknown,
  options: InboxOptions & {
    host?: string;
    port?: number;
    role?: "all" | "ingest";
    /** Overrides `metrics.port` (null: no metrics listener). */
    metricsPort?: number | null;
  } = {},
): Promise<Gateway> {
  // A config file is checked at run time (resolveConfig), not by its static type.
  const inbox = createInbox(config as HookinboxConfig, options);
  try {
    await inbox.ready();
  } catch (error) {
    await inbox.close().catch(() => undefined);
    throw error;
  }
  // Retention (rejected receipts after 7 days and dedup keys after 35 by default; payloads,
  // events and receipts when configured), swept hourly; PostgreSQL partitions are made ahead.
  const retention = inbox.upkeep();
  // Tree heads of the audit log: signed every audit.headInterval when the log grew. The key is
  // loaded (or made) now, so a bad key fails the start and the public key can be printed.
  try {
    inbox.audit?.publicKey();
  } catch (error) {
    await retention.stop();
    await inbox.close().catch(() => undefined);
    throw error;
  }
  inbox.audit?.start(inbox.config.audit.headIntervalMs);
  const http = inbox.config.http;
  const server = createServer(
    {
      // Node's own timeouts back up the body read timeout for slow-header and slow-body clients.
      requestTimeout: http.requestTimeoutMs,
      headersTimeout: Math.min(http.headersTimeoutMs, http.requestTimeoutMs),
      keepAliveTimeout: http.keepAliveTimeoutMs,
      // How often those two are checked (Node's default is 30 s).
      connectionsCheckingInterval: Math.min(2_000, http.headersTimeoutMs),
    },
    toNodeListener(inbox),
  );
  const closedConnections = inbox.metrics
    ? new Counter<"reason">({
        name: "hookinbox_connections_closed_total",
        help: "Connections the gateway closed or refused to keep slots free, by reason: idle, refused, address-share, fair-share.",
        labelNames: ["reason"],
        registers: [inbox.metrics.registry],
      })
    : null;
  const connections = guardConnections(server, {
    maxConnections: http.maxConnections,
    idleTimeoutMs: http.idleTimeoutMs,
    maxConnectionsPerAddress: http.maxConnectionsPerAddress,
    exempt: http.trustedProxies,
    onClosed: (reason) => closedConnections?.inc({ reason }),
  });
  // CONNECT is no tunnel here: answer it like any other request hookinbox does not serve.
  server.on("connect", (_req, socket: Duplex) => {
    socket.on("error", () => undefined);
    socket.end(rawErrorAnswer("HOOKINBOX_METHOD_NOT_ALLOWED"));
  });
  // Requests the parser refuses get hookinbox's JSON error and /api headers, not Node's bare 400.
  server.on("clientError", answerClientError);
  const host = options.host ?? inbox.config.http.host;
  const port = options.port ?? inbox.config.http.port;
  let url: string;
  try {
    url = await listen(server, host, port);
  } catch (error) {
    // Nothing may keep the process alive after a failed start (a port in use).
    await retention.stop();
    await inbox.close().catch(() => undefined);
    throw error;
  }
  // A destination that is this listener would turn each event into endless new ones: refused
  // before the worker forwards anything (the port is known only now when it was 0).
  try {
    refuseOwnWebhookDestinations(inbox.config.destinations.values(), {
      host,
      port: Number(new URL(url).port),
      publicUrl: http.publicUrl,
    });
  } catch (error) {
    await new Promise((resolve) => server.close(resolve));
    await retention.stop();
    await inbox.close().catch(() => undefined);
    throw error;
  }
  // In-process handlers and destinations run in this process's worker; events arrive through
  // `notify`, so a new delivery starts without waiting for a poll. With --role ingest, workers
  // run elsewhere (`--role worker`) and learn of new deliveries from the store (PostgreSQL
  // NOTIFY) or its poll.
  const worker =
    options.role !== "ingest" &&
    inbox.config.worker.enabled &&
    (inbox.config.handlers.size > 0 || inbox.config.destinations.size > 0)
      ? inbox.startWorker()
      : null;
  const metricsPort = options.metricsPort ?? inbox.config.metrics.port;
  let metrics: MetricsServer | null = null;
  try {
    metrics =
      metricsPort !== null && inbox.metrics
        ? await startMetricsServer(inbox, inbox.config.metrics.host, metricsPort)
        : null;
  } catch (error) {
    server.close();
    await worker?.stop();
    await retention.stop();
    await inbox.close().catch(() => undefined);
    throw error;
  }
  return {
    inbox,
    worker,
    server,
    metrics,
    retention,
    url,
    connections,
    async close() {
      await retention.stop();
      connections.releaseHeld();
      // Event streams never finish by themselves: end them so the drain does not wait for them.
      inbox.endStreams();
      await drainServer(server, http.drainTimeoutMs);
      await metrics?.close();
      await inbox.close();
    },
  };
}
