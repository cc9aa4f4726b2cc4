import { handleAdmin } from "./admin/admin-api.ts";
import type { AdminHost } from "./admin/admin-host.ts";
import { isApiUrl, withApiHeaders } from "./admin/api-headers.ts";
import { isDashboardPath, serveDashboard } from "./admin/dashboard-assets.ts";
import { wakeEventStreams } from "./admin/event-stream-hub.ts";
import { hookinboxError, isHookinboxError } from "./errors.ts";
import { ulid } from "./ids.ts";
import type { Inbox } from "./inbox-types.ts";
import { acceptWebhook, type IngestContext, unknownSourceLabel } from "./ingest/accept-webhook.ts";
import { acceptedEventIds } from "./ingest/accepted-events.ts";
import { readHeaders } from "./ingest/headers.ts";
import type { Readiness } from "./ingest/readiness.ts";
import {
  errorResponse,
  type InboxRequest,
  type InboxResponse,
  jsonResponse,
} from "./ingest/request.ts";
import { parseRequestTarget } from "./ingest/request-target.ts";

/** What the router needs from the inbox it answers for. */
export interface RouterHost {
  /** What ingest runs against; its readiness (required here) answers `/readyz` too. */
  readonly ingest: IngestContext & { readonly readiness: Readiness };
  /** Settles once migrations have run; a failure is answered 503. */
  readonly migrated: Promise<unknown>;
  /** True once the inbox is closed (then ingest and `/readyz` answer 503). */
  isClosed(): boolean;
  /** What `/api` runs against (metrics included, for request latencies). */
  readonly admin: AdminHost;
  /** The admin token; null turns `/api` and the dashboard off. */
  readonly adminToken: string | null;
}

/** The message and code of anything thrown, for a log line (never a body or a secret). */
function describeError(error: unknown): { message: string; code: string | undefined } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { message: error.message, code: typeof code === "string" ? code : undefined };
  }
  return { message: String(error), code: undefined };
}

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

/**
 * The inbox's HTTP surface: `POST /webhooks/:source`, `GET /healthz`, `GET /readyz`, the admin
 * API under `/api` and the dashboard's page and assets; never throws (a bug is a logged 500).
 *
 * @example
 * ```ts
 * const router = createRouter({ ingest, migrated, isClosed: () => closed, admin, adminToken });
 * const response = await router.handle({ method: "GET", url: "/healthz", headers: {}, body });
 * ```
 */
export function createRouter(
  host: RouterHost,
): Pick<Inbox, "handle" | "handleWebhook" | "internalError"> {
  const { ingest, migrated, admin, adminToken } = host;
  const { logger } = ingest;
  const { metrics } = admin;

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

  const ingestWebhook = async (source: string, request: InboxRequest): Promise<InboxResponse> => {
    if (host.isClosed()) return unavailable(hookinboxError("HOOKINBOX_STORE_CLOSED"));
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

  const handleWebhook = async (source: string, request: InboxRequest): Promise<InboxResponse> => {
    const started = performance.now();
    const response = await ingestWebhook(source, request);
    // Listeners of this process's event streams hear of it now, not at the next poll.
    if (acceptedEventIds(response)?.length) wakeEventStreams(admin);
    if (!metrics) return response;
    metrics.request(
      ingest.sources.has(source) ? source : unknownSourceLabel,
      (performance.now() - started) / 1000,
    );
    return response;
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
        if (host.isClosed()) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
        await migrated;
        const result = await ingest.readiness.check();
        if (!result.ok) throw result.error;
        return jsonResponse(200, { ok: true, store: ingest.store.kind });
      } catch (error) {
        return unavailable(error);
      }
    }
    if (pathname === "/api" || pathname.startsWith("/api/")) {
      return handleAdmin(
        {
          host: admin,
          token: adminToken,
          remoteAddress: request.remoteAddress ?? null,
          canStream: request.canStream === true,
        },
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

  return {
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
  };
}
