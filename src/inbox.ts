import { handleAdmin } from "./admin/admin-api.ts";
import { type ResolvedConfig, resolveConfig } from "./config/index.ts";
import { hookinboxError, isHookinboxError } from "./errors.ts";
import { acceptWebhook, type IngestContext } from "./ingest/accept-webhook.ts";
import { readHeaders } from "./ingest/headers.ts";
import {
  errorResponse,
  type InboxRequest,
  type InboxResponse,
  jsonResponse,
} from "./ingest/request.ts";
import { type Logger, silentLogger } from "./log.ts";
import { openStore } from "./store/open-store.ts";
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
  /** Overrides `admin.token` (the gateway passes a generated one). */
  readonly adminToken?: string | null;
}

/** An inbox: ingest, the admin read API and health checks behind one `handle`. */
export interface Inbox {
  readonly config: ResolvedConfig;
  readonly store: Store;
  /** Resolves once migrations have run; `handle` waits for it by itself. */
  ready(): Promise<void>;
  /**
   * Routes one request: `POST /webhooks/:source`, `GET /api/…`, `GET /healthz`, `GET /readyz`.
   * Never throws.
   */
  handle(request: InboxRequest): Promise<InboxResponse>;
  /** Ingest for a source named by the host (for frameworks that route by themselves). */
  handleWebhook(source: string, request: InboxRequest): Promise<InboxResponse>;
  close(): Promise<void>;
}

const webhookPath = /^\/webhooks\/([^/?#]+)\/?$/;

/**
 * Creates an inbox from a config object. The store is opened at once and migrated before the first
 * request is handled.
 *
 * @example
 * ```ts
 * const inbox = createInbox({ sources: { stripe: stripe({ secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] }) } });
 * const response = await inbox.handle({ method: "POST", url: "/webhooks/stripe", headers, body });
 * ```
 */
export function createInbox(config: unknown, options: InboxOptions = {}): Inbox {
  const resolved = resolveConfig(config, options.env ?? process.env);
  const store = options.store ?? openStore(resolved.store);
  const logger = options.logger ?? silentLogger();
  const migrated = store.migrate().then(() => undefined);
  migrated.catch(() => {
    // Surfaced by ready() and as 503s; never an unhandled rejection.
  });
  const ingest: IngestContext = {
    sources: resolved.sources,
    store,
    logger,
    now: options.now ?? Date.now,
    bodyLimit: resolved.http.bodyLimit,
  };
  const adminToken = options.adminToken !== undefined ? options.adminToken : resolved.admin.token;
  let closed = false;

  const unavailable = (error: unknown) => {
    const e =
      isHookinboxError(error) && error.status === 503
        ? error
        : hookinboxError("HOOKINBOX_STORE_UNAVAILABLE");
    return errorResponse(e.status, e.code, e.message);
  };

  const handleWebhook = async (source: string, request: InboxRequest): Promise<InboxResponse> => {
    if (closed) return unavailable(hookinboxError("HOOKINBOX_STORE_CLOSED"));
    try {
      await migrated;
    } catch (error) {
      return unavailable(error);
    }
    return acceptWebhook(ingest, source, request);
  };

  return {
    config: resolved,
    store,
    ready: () => migrated,
    handleWebhook,
    async handle(request) {
      const url = new URL(request.url, "http://hookinbox.invalid");
      const hook = webhookPath.exec(url.pathname);
      if (hook) return handleWebhook(decodeURIComponent(hook[1]!), request);
      if (request.bodyError) {
        return errorResponse(
          request.bodyError.status,
          request.bodyError.code,
          request.bodyError.message,
        );
      }
      if (url.pathname === "/healthz") return jsonResponse(200, { ok: true });
      if (url.pathname === "/readyz") {
        try {
          if (closed) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
          await migrated;
          await store.ping();
          return jsonResponse(200, { ok: true, store: store.kind });
        } catch (error) {
          return unavailable(error);
        }
      }
      if (url.pathname === "/api" || url.pathname.startsWith("/api/")) {
        return handleAdmin(
          { store, token: adminToken },
          request.method.toUpperCase(),
          url,
          readHeaders(request.headers),
        );
      }
      const notFound = hookinboxError("HOOKINBOX_ROUTE_NOT_FOUND");
      return errorResponse(notFound.status, notFound.code, notFound.message);
    },
    async close() {
      if (closed) return;
      closed = true;
      await migrated.catch(() => undefined);
      await store.close();
    },
  };
}
