import { hookinboxError } from "../errors.ts";
import type { InboxResponse } from "../ingest/request.ts";
import { decodePathSegment } from "../ingest/request-target.ts";
import type { DeliveryStatus } from "../store/queue-types.ts";
import type { AdminContext } from "./admin-api.ts";

/** One admin route's handler: the path match, the URL, the raw body and the context. */
export type AdminRoute = (
  match: RegExpExecArray,
  url: URL,
  body: Uint8Array,
  context: AdminContext,
) => Promise<InboxResponse>;

/**
 * A decoded path parameter; a malformed or non-UTF-8 escape is a 400, never a 500.
 *
 * @example
 * ```ts
 * pathParam("evt%5F1"); // "evt_1"
 * ```
 */
export function pathParam(segment: string): string {
  const decoded = decodePathSegment(segment);
  if (decoded === null) {
    throw hookinboxError("HOOKINBOX_REQUEST_TARGET_INVALID", "malformed percent-escape");
  }
  return decoded;
}

/**
 * `?limit=` as 1..500, or undefined when absent; anything else is HOOKINBOX_QUERY_INVALID.
 *
 * @example
 * ```ts
 * parseLimit(url.searchParams.get("limit")); // 50 | undefined
 * ```
 */
export function parseLimit(value: string | null): number | undefined {
  if (value === null) return undefined;
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || limit > 500)
    throw hookinboxError("HOOKINBOX_QUERY_INVALID", "limit must be an integer from 1 to 500");
  return limit;
}

/**
 * A request body that must be a JSON object (an empty body is `{}`).
 *
 * @example
 * ```ts
 * jsonBody(new TextEncoder().encode('{"reason":"deploy"}')); // { reason: "deploy" }
 * ```
 */
export function jsonBody(body: Uint8Array): Record<string, unknown> {
  if (body.byteLength === 0) return {};
  try {
    const parsed = JSON.parse(new TextDecoder().decode(body)) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw hookinboxError("HOOKINBOX_QUERY_INVALID", "the request body must be a JSON object");
}

/**
 * An optional string field of a JSON body.
 *
 * @example
 * ```ts
 * optionalString(input.reason, "reason"); // "deploy" | undefined
 * ```
 */
export function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string")
    throw hookinboxError("HOOKINBOX_QUERY_INVALID", `${name} must be a string`);
  return value;
}

const deliveryStatuses = new Set(["pending", "blocked", "running", "done", "stale", "dead"]);

/**
 * `?status=` as a delivery status, or undefined when absent; anything else is
 * HOOKINBOX_QUERY_INVALID.
 *
 * @example
 * ```ts
 * parseDeliveryStatus("dead"); // "dead"
 * ```
 */
export function parseDeliveryStatus(value: string | null): DeliveryStatus | undefined {
  if (value === null) return undefined;
  if (!deliveryStatuses.has(value))
    throw hookinboxError(
      "HOOKINBOX_QUERY_INVALID",
      `status must be one of ${[...deliveryStatuses].join(", ")}`,
    );
  return value as DeliveryStatus;
}

/**
 * `targets` of a replay body: an array of target names, or undefined when absent.
 *
 * @example
 * ```ts
 * targetsOf(["app", "stripe:*"]); // ["app", "stripe:*"]
 * ```
 */
export function targetsOf(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((t) => typeof t === "string")) {
    throw hookinboxError("HOOKINBOX_QUERY_INVALID", "targets must be an array of handler patterns");
  }
  return value as string[];
}
