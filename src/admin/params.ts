import { hookinboxError } from "../errors.ts";
import { decodePathSegment } from "../ingest/request-target.ts";

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
