import { parseDuration } from "../config/units.ts";
import { hookinboxError, isHookinboxError } from "../errors.ts";
import type { Inbox } from "../inbox.ts";
import type { RequestHeaders } from "../ingest/headers.ts";
import { errorResponse, type InboxResponse, jsonResponse } from "../ingest/request.ts";
import type { Runbooks } from "../operations/runbooks.ts";
import type { DeliveryView, ReplayFilter } from "../store/queue-types.ts";
import type { EventDetail } from "../store/types.ts";
import { auditRoutes } from "./audit-routes.ts";
import { dashboardRoutes } from "./dashboard-routes.ts";
import { destinationRoutes, replayTargets } from "./destination-routes.ts";
import {
  type AdminRoute,
  jsonBody,
  optionalString,
  parseDeliveryStatus,
  parseLimit,
  pathParam,
  targetsOf,
} from "./params.ts";
import { authenticateAdmin, handleSessionRoute } from "./session-routes.ts";

/** What the admin API needs. A null token disables it. */
export interface AdminContext {
  readonly inbox: Inbox;
  readonly token: string | null;
  /** The TCP peer (for `X-Forwarded-Proto` from `http.trustedProxies`: the cookie's Secure). */
  readonly remoteAddress?: string | null;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function bodyView(body: Uint8Array): { base64: string; text: string | null } {
  let text: string | null;
  try {
    text = utf8.decode(body);
  } catch {
    text = null;
  }
  return {
    base64: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("base64"),
    text,
  };
}

function eventJson(event: EventDetail, runbooks: Runbooks) {
  const { body, deliveries, ...rest } = event;
  return {
    ...rest,
    body: bodyView(body),
    deliveries: deliveries.map((d) => withRunbook(d, runbooks)),
    runbook: runbooks.for(event.source, event.type),
  };
}

/** A delivery with the runbook of its event's type beside it. */
function withRunbook(delivery: DeliveryView, runbooks: Runbooks) {
  return { ...delivery, runbook: runbooks.for(delivery.source, delivery.type) };
}

function parseTime(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = typeof value === "number" ? value : Date.parse(String(value));
  if (Number.isNaN(ms))
    throw hookinboxError("HOOKINBOX_QUERY_INVALID", `${name} must be an ISO 8601 time`);
  return ms;
}

const routes: Array<{ method: string; path: RegExp; run: AdminRoute }> = [
  {
    method: "GET",
    path: /^\/api\/events$/,
    run: async (_m, url, _b, { inbox }) => {
      const q = url.searchParams;
      return jsonResponse(
        200,
        await inbox.store.listEvents({
          source: q.get("source") ?? undefined,
          type: q.get("type") ?? undefined,
          status: q.get("status") ?? undefined,
          limit: parseLimit(q.get("limit")),
          cursor: q.get("cursor") ?? undefined,
        }),
      );
    },
  },
  {
    method: "GET",
    path: /^\/api\/events\/([^/]+)$/,
    run: async (m, _u, _b, { inbox }) => {
      const event = await inbox.store.getEvent(pathParam(m[1]!));
      if (!event) throw hookinboxError("HOOKINBOX_EVENT_NOT_FOUND");
      return jsonResponse(200, eventJson(event, inbox.config.runbooks));
    },
  },
  {
    method: "GET",
    path: /^\/api\/receipts$/,
    run: async (_m, url, _b, { inbox }) => {
      const q = url.searchParams;
      const rejected = q.get("rejected");
      if (rejected !== null && rejected !== "true" && rejected !== "false") {
        throw hookinboxError("HOOKINBOX_QUERY_INVALID", "rejected must be true or false");
      }
      return jsonResponse(
        200,
        await inbox.store.listReceipts({
          rejected: rejected === null ? undefined : rejected === "true",
          source: q.get("source") ?? undefined,
          limit: parseLimit(q.get("limit")),
          cursor: q.get("cursor") ?? undefined,
        }),
      );
    },
  },
  {
    method: "POST",
    path: /^\/api\/events\/([^/]+)\/replay$/,
    run: async (m, _u, body, { inbox }) => {
      const targets = replayTargets(inbox, jsonBody(body));
      const deliveries = await inbox.replay(pathParam(m[1]!), targets ? { targets } : {});
      return jsonResponse(201, { deliveries });
    },
  },
  {
    method: "POST",
    path: /^\/api\/replays$/,
    run: async (_m, _u, body, { inbox }) => {
      const input = jsonBody(body);
      const filter: ReplayFilter = {
        source: optionalString(input.source, "source"),
        type: optionalString(input.type, "type"),
        status: optionalString(input.status, "status"),
        receivedFrom: parseTime(input.receivedFrom, "receivedFrom"),
        receivedTo: parseTime(input.receivedTo, "receivedTo"),
      };
      const targets = targetsOf(input.targets);
      return jsonResponse(201, await inbox.replayWhere(filter, targets ? { targets } : {}));
    },
  },
  {
    method: "GET",
    path: /^\/api\/deliveries$/,
    run: async (_m, url, _b, { inbox }) => {
      const q = url.searchParams;
      const page = await inbox.store.listDeliveries({
        status: parseDeliveryStatus(q.get("status")),
        target: q.get("target") ?? undefined,
        eventId: q.get("eventId") ?? undefined,
        limit: parseLimit(q.get("limit")),
        cursor: q.get("cursor") ?? undefined,
      });
      return jsonResponse(200, {
        ...page,
        items: page.items.map((d) => withRunbook(d, inbox.config.runbooks)),
      });
    },
  },
  {
    method: "POST",
    path: /^\/api\/deliveries\/retry$/,
    run: async (_m, _u, body, { inbox }) => {
      const input = jsonBody(body);
      const ids = input.ids;
      if (
        !Array.isArray(ids) ||
        ids.length < 1 ||
        ids.length > 500 ||
        !ids.every((id) => typeof id === "string")
      ) {
        throw hookinboxError("HOOKINBOX_QUERY_INVALID", "ids must be 1 to 500 delivery ids");
      }
      if (input.override !== undefined && typeof input.override !== "boolean")
        throw hookinboxError("HOOKINBOX_QUERY_INVALID", "override must be true or false");
      return jsonResponse(
        200,
        await inbox.retryDeliveries(ids as string[], { override: input.override === true }),
      );
    },
  },
  {
    method: "GET",
    path: /^\/api\/runbooks$/,
    run: async (_m, _u, _b, { inbox }) => jsonResponse(200, { items: inbox.config.runbooks.all }),
  },
  {
    method: "POST",
    path: /^\/api\/deliveries\/([^/]+)\/retry$/,
    run: async (m, _u, _b, { inbox }) =>
      jsonResponse(200, await inbox.retryDelivery(pathParam(m[1]!))),
  },
  {
    method: "GET",
    path: /^\/api\/effects$/,
    run: async (_m, url, _b, { inbox }) => {
      const status = url.searchParams.get("status") ?? undefined;
      if (status !== undefined && !["processing", "done", "held"].includes(status)) {
        throw hookinboxError("HOOKINBOX_QUERY_INVALID", "status must be processing, done or held");
      }
      const eventId = url.searchParams.get("eventId") ?? undefined;
      return jsonResponse(200, {
        items: await inbox.store.listEffects({ status: status as "held" | undefined, eventId }),
      });
    },
  },
  {
    method: "POST",
    path: /^\/api\/effects\/([^/]+)\/resolve$/,
    run: async (m, _u, body, { inbox }) => {
      const input = jsonBody(body);
      const resolution = input.resolution;
      if (resolution !== "done" && resolution !== "release") {
        throw hookinboxError(
          "HOOKINBOX_QUERY_INVALID",
          'resolution must be "done" (it happened) or "release" (run it again)',
        );
      }
      const effect = await inbox.store.resolveEffect(
        pathParam(m[1]!),
        resolution,
        inbox.now(),
        input.result,
      );
      if (!effect) throw hookinboxError("HOOKINBOX_EFFECT_NOT_FOUND");
      return jsonResponse(200, effect);
    },
  },
  {
    method: "GET",
    path: /^\/api\/metrics$/,
    run: async (_m, _u, _b, { inbox }) => {
      if (!inbox.metrics) throw hookinboxError("HOOKINBOX_METRICS_DISABLED");
      const { contentType, body } = await inbox.metrics.render();
      return { status: 200, headers: { "content-type": contentType }, body };
    },
  },
  {
    method: "GET",
    path: /^\/api\/stuck$/,
    run: async (_m, url, _b, { inbox }) => {
      const olderThanMs = parseDuration(url.searchParams.get("olderThan") ?? "1h");
      if (olderThanMs === undefined)
        throw hookinboxError("HOOKINBOX_QUERY_INVALID", 'olderThan must be a duration like "1h"');
      return jsonResponse(
        200,
        await inbox.store.stuck({
          now: inbox.now(),
          olderThanMs,
          limit: parseLimit(url.searchParams.get("limit")) ?? 50,
        }),
      );
    },
  },
  ...destinationRoutes,
  ...auditRoutes,
  ...dashboardRoutes,
];

/**
 * The admin API under `/api` (bearer token): events, deliveries (dead letters), replays, retries,
 * effects held for a human, stuck work, and destinations (state, pause/resume/enable).
 *
 * @example
 * ```ts
 * const response = await handleAdmin({ inbox, token }, "GET", new URL(url, "http://x"), headers, body);
 * ```
 */
export async function handleAdmin(
  context: AdminContext,
  method: string,
  url: URL,
  headers: RequestHeaders,
  body: Uint8Array = new Uint8Array(0),
): Promise<InboxResponse> {
  const fail = (error: unknown) => {
    // Anything else is a bug: the inbox answers 500 and logs it with a request id.
    if (!isHookinboxError(error)) throw error;
    return errorResponse(error.status, error.code, error.message);
  };
  if (context.token === null) return fail(hookinboxError("HOOKINBOX_ADMIN_DISABLED"));
  // Sign-in and sign-out of the dashboard (src/admin/dashboard-routes.ts), then who is calling:
  // a Bearer token, or a session cookie (whose writes need the CSRF header).
  const signed = { ...context, token: context.token };
  const session = await handleSessionRoute(signed, method, url, headers, body).catch(fail);
  if (session) return session;
  const caller = authenticateAdmin(signed, method, headers);
  if (caller instanceof Error) {
    const response = fail(caller);
    if (caller.code !== "HOOKINBOX_ADMIN_UNAUTHORIZED") return response;
    return { ...response, headers: { ...response.headers, "www-authenticate": "Bearer" } };
  }
  let pathMatched = false;
  for (const route of routes) {
    const match = route.path.exec(url.pathname);
    if (!match) continue;
    pathMatched = true;
    if (route.method !== method) continue;
    try {
      return await route.run(match, url, body, context);
    } catch (error) {
      return fail(error);
    }
  }
  return fail(
    hookinboxError(pathMatched ? "HOOKINBOX_METHOD_NOT_ALLOWED" : "HOOKINBOX_ROUTE_NOT_FOUND"),
  );
}
