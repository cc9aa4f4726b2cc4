import type { z } from "zod";
import type { RequestHeaders } from "../ingest/headers.ts";
import type { InboxResponse } from "../ingest/request.ts";
import * as ops from "../operations/index.ts";
import type { Operation } from "../operations/operation.ts";
import type { AdminHost } from "./admin-host.ts";

/**
 * One admin route: a method and a path template (`{name}` segments are path parameters) over
 * an operation. The input of the operation is, by one rule for every route: the query (GET) or
 * the JSON body (POST), with the path parameters on top.
 */
export interface OperationRoute {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly operation: Operation;
  /** The status of a success; 200 unless it creates something. */
  readonly status?: number;
}

/** What a raw route may read of its request besides the path. */
export interface RawRequest {
  readonly url: URL;
  readonly headers: RequestHeaders;
  /** Whether the host writes streamed answers (`InboxResponse.stream`). */
  readonly canStream: boolean;
}

/**
 * A route answered by the host itself, not by an operation (metrics, the OpenAPI document, the
 * event stream). Raw routes only read.
 */
export interface RawRoute {
  readonly method: "GET";
  readonly path: string;
  readonly summary: string;
  readonly contentType: string;
  /** Its query parameters, for the OpenAPI document (the route parses them itself). */
  readonly query?: z.ZodObject;
  readonly raw: (host: AdminHost, request: RawRequest) => Promise<InboxResponse>;
}

export type AdminRouteEntry = OperationRoute | RawRoute;

// Widens each operation's typed input to the table's common shape.
const op = <S extends z.ZodObject, R>(operation: Operation<S, R>) =>
  operation as unknown as Operation;

/**
 * Every admin route over an operation. Order matters only for paths that could match twice.
 *
 * @example
 * ```ts
 * operationRoutes.find((r) => r.path === "/api/events")?.operation.name; // "events.list"
 * ```
 */
export const operationRoutes: readonly OperationRoute[] = [
  { method: "GET", path: "/api/events", operation: op(ops.listEvents) },
  { method: "GET", path: "/api/events/{id}", operation: op(ops.showEvent) },
  { method: "POST", path: "/api/events/{id}/replay", operation: op(ops.replayEvent), status: 201 },
  { method: "GET", path: "/api/events/{id}/preview", operation: op(ops.previewTransforms) },
  { method: "POST", path: "/api/replays", operation: op(ops.replayWhere), status: 201 },
  { method: "GET", path: "/api/receipts", operation: op(ops.listReceipts) },
  { method: "GET", path: "/api/deliveries", operation: op(ops.listDeliveries) },
  { method: "POST", path: "/api/deliveries/retry", operation: op(ops.retryDeliveriesNow) },
  { method: "GET", path: "/api/deliveries/{id}", operation: op(ops.showDelivery) },
  { method: "POST", path: "/api/deliveries/{id}/retry", operation: op(ops.retryDelivery) },
  { method: "GET", path: "/api/dead-letters", operation: op(ops.listDeadLetters) },
  { method: "POST", path: "/api/dead-letters/retry", operation: op(ops.retryDeadLetters) },
  { method: "GET", path: "/api/runbooks", operation: op(ops.listRunbooks) },
  { method: "GET", path: "/api/effects", operation: op(ops.listEffects) },
  { method: "POST", path: "/api/effects/{id}/resolve", operation: op(ops.resolveEffect) },
  { method: "GET", path: "/api/stuck", operation: op(ops.stuckWork) },
  { method: "GET", path: "/api/destinations", operation: op(ops.listDestinations) },
  { method: "GET", path: "/api/destinations/{name}", operation: op(ops.showDestination) },
  { method: "POST", path: "/api/destinations/{name}/pause", operation: op(ops.pauseDestination) },
  { method: "POST", path: "/api/destinations/{name}/resume", operation: op(ops.resumeDestination) },
  { method: "POST", path: "/api/destinations/{name}/enable", operation: op(ops.enableDestination) },
  {
    method: "GET",
    path: "/api/destinations/{name}/deliveries",
    operation: op(ops.destinationDeliveries),
  },
  { method: "GET", path: "/api/audit/key", operation: op(ops.auditKey) },
  { method: "GET", path: "/api/audit/head", operation: op(ops.latestHead) },
  { method: "POST", path: "/api/audit/head", operation: op(ops.signHead), status: 201 },
  { method: "GET", path: "/api/audit/proof/{eventId}", operation: op(ops.proveEvent) },
  { method: "GET", path: "/api/audit/consistency", operation: op(ops.proveConsistency) },
];

/**
 * The names of a path template's parameters, in order.
 *
 * @example
 * ```ts
 * pathParams("/api/destinations/{name}/pause"); // ["name"]
 * ```
 */
export function pathParams(template: string): string[] {
  return [...template.matchAll(/\{([A-Za-z]+)\}/g)].map((m) => m[1]!);
}

/**
 * A path template as a regular expression with one capture group per parameter.
 *
 * @example
 * ```ts
 * templateRegExp("/api/events/{id}").exec("/api/events/evt_1")?.[1]; // "evt_1"
 * ```
 */
export function templateRegExp(template: string): RegExp {
  const escaped = template
    .split(/\{[A-Za-z]+\}/)
    .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${escaped.join("([^/]+)")}$`);
}

/**
 * Whether a route only reads (what the read-only token may call): a GET over a read-only
 * operation, or a raw route. Everything else changes state.
 *
 * @example
 * ```ts
 * isReadRoute({ method: "POST", path: "/api/replays", operation: replayWhere }); // false
 * ```
 */
export function isReadRoute(route: AdminRouteEntry): boolean {
  return route.method === "GET" && ("raw" in route || route.operation.readOnly);
}
