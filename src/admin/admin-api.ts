import { type HookinboxError, hookinboxError, isHookinboxError } from "../errors.ts";
import type { RequestHeaders } from "../ingest/headers.ts";
import { errorResponse, type InboxResponse, jsonResponse } from "../ingest/request.ts";
import { parseInput } from "../operations/operation.ts";
import type { AdminContext, AdminHost } from "./admin-host.ts";
import { type AdminScope, isAuthorized, scopeRefusal } from "./auth.ts";
import { adminAuthLimit } from "./auth-limit.ts";
import { dashboardRoutes } from "./dashboard-routes.ts";
import { eventStreamRoute } from "./event-stream-route.ts";
import { openApiDocument } from "./openapi.ts";
import { jsonBody, pathParam } from "./params.ts";
import {
  type AdminRouteEntry,
  operationRoutes,
  pathParams,
  type RawRoute,
  templateRegExp,
} from "./route-table.ts";
import { authenticateAdmin, handleSessionRoute } from "./session-routes.ts";

export type { AdminContext, AdminHost } from "./admin-host.ts";

/** Routes the host answers itself: Prometheus text and the API's own description. */
const rawRoutes: readonly RawRoute[] = [
  {
    method: "GET",
    path: "/api/metrics",
    summary: "Prometheus metrics (when metrics.enabled)",
    contentType: "text/plain",
    raw: async (host) => {
      if (!host.metrics) throw hookinboxError("HOOKINBOX_METRICS_DISABLED");
      const { contentType, body } = await host.metrics.render();
      return { status: 200, headers: { "content-type": contentType }, body };
    },
  },
  {
    method: "GET",
    path: "/api/openapi.json",
    summary: "this API as an OpenAPI 3.1 document",
    contentType: "application/json",
    raw: async () => jsonResponse(200, openApiDocument(adminRoutes)),
  },
  eventStreamRoute,
];

/**
 * Every admin route, operations and raw ones, as the OpenAPI document lists them.
 *
 * @example
 * ```ts
 * adminRoutes.map((r) => `${r.method} ${r.path}`); // ["GET /api/events", …]
 * ```
 */
export const adminRoutes: readonly AdminRouteEntry[] = [
  ...operationRoutes,
  ...dashboardRoutes,
  ...rawRoutes,
];

// Literal paths first, so `/api/events/stream` is never read as the event id "stream".
const literalFirst = (route: AdminRouteEntry) => (route.path.includes("{") ? 1 : 0);
const compiled = [...adminRoutes]
  .sort((a, b) => literalFirst(a) - literalFirst(b))
  .map((route) => ({
    route,
    pattern: templateRegExp(route.path),
    params: pathParams(route.path),
  }));

/** Runs one matched route: its operation's input is the query (GET) or body (POST) plus the path. */
async function runRoute(
  entry: (typeof compiled)[number],
  match: RegExpExecArray,
  url: URL,
  body: Uint8Array,
  headers: RequestHeaders,
  host: AdminHost,
  canStream: boolean,
): Promise<InboxResponse> {
  const { route } = entry;
  if ("raw" in route) return route.raw(host, { url, headers, canStream });
  const fromPath = Object.fromEntries(
    entry.params.map((name, i) => [name, pathParam(match[i + 1]!)]),
  );
  const given = route.method === "GET" ? Object.fromEntries(url.searchParams) : jsonBody(body);
  const input = parseInput(route.operation, { ...given, ...fromPath }, "HOOKINBOX_QUERY_INVALID");
  await host.ready();
  return jsonResponse(route.status ?? 200, await route.operation.run(host.operations, input));
}

/**
 * The admin API under `/api` (bearer token): a route table over the operations layer (events,
 * deliveries and dead letters, replays, retries, effects, stuck work, destinations, audit), plus
 * `/api/metrics` and `/api/openapi.json`.
 *
 * @example
 * ```ts
 * const response = await handleAdmin({ host: inbox, token }, "GET", new URL(url, "http://x"), headers, body);
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
  // Guessing the token: wrong ones are counted per address, and past the limit refused first.
  const limit = adminAuthLimit(context.host, context.remoteAddress ?? null, headers);
  const refused = limit.refusal();
  if (refused) return refused;
  // The read-only token (admin.readToken): reads and the event stream, nothing that writes.
  const readToken = context.host.config.admin.readToken ?? null;
  const scope: AdminScope =
    readToken !== null && isAuthorized(headers.get("authorization"), readToken) ? "read" : "full";
  if (scope === "read" && url.pathname === "/api/session")
    return fail(scopeRefusal(scope, "session"));
  const session =
    scope === "read"
      ? null
      : await handleSessionRoute(signed, method, url, headers, body).catch((error) => {
          if (isHookinboxError(error) && error.code === "HOOKINBOX_ADMIN_UNAUTHORIZED")
            limit.recordFailure();
          return fail(error);
        });
  if (session) return session;
  const caller: { kind: string } | HookinboxError =
    scope === "read" ? { kind: "reader" } : authenticateAdmin(signed, method, headers);
  if (caller instanceof Error) {
    // A Bearer token that is wrong is a guess; a missing one (a first visit) is not.
    if (
      caller.code === "HOOKINBOX_ADMIN_UNAUTHORIZED" &&
      headers.get("authorization") !== undefined
    )
      limit.recordFailure();
    const response = fail(caller);
    if (caller.code !== "HOOKINBOX_ADMIN_UNAUTHORIZED") return response;
    return { ...response, headers: { ...response.headers, "www-authenticate": "Bearer" } };
  }
  let pathMatched = false;
  for (const entry of compiled) {
    const match = entry.pattern.exec(url.pathname);
    if (!match) continue;
    pathMatched = true;
    if (entry.route.method !== method) continue;
    const refused = scopeRefusal(scope, entry.route);
    if (refused) return fail(refused);
    try {
      return await runRoute(
        entry,
        match,
        url,
        body,
        headers,
        context.host,
        context.canStream === true,
      );
    } catch (error) {
      return fail(error);
    }
  }
  return fail(
    hookinboxError(pathMatched ? "HOOKINBOX_METHOD_NOT_ALLOWED" : "HOOKINBOX_ROUTE_NOT_FOUND"),
  );
}
