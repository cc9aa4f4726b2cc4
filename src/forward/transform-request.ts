import { createHash } from "node:crypto";
import { type ErrorCode, isHookinboxError } from "../errors.ts";
import { idTime } from "../ids.ts";
import type { AttemptResponse } from "../store/forward-types.ts";
import { forwardableHeaders } from "./forwarded-headers.ts";
import type { ResolvedDestination } from "./resolve-destinations.ts";
import type { RouteTable } from "./route-table.ts";
import { type ResolvedTransform, runTransforms } from "./transform.ts";

/** A route's transform for one event and target (the route table's `transformFor`). */
export type RouteTransformLookup = RouteTable["transformFor"];

/** The stored event a request is prepared from (a claimed delivery is one). */
export interface PreparableEvent {
  readonly eventId: string;
  readonly source: string;
  readonly type: string | null;
  readonly body: Uint8Array;
  readonly headers: ReadonlyArray<readonly [string, string]>;
}

/** What a destination is to be sent for one event: the request, or nothing (filtered). */
export type PreparedRequest =
  | {
      readonly kind: "send";
      readonly body: Uint8Array;
      /** The original headers after the transforms (static and hookinbox's own go on top). */
      readonly headers: Readonly<Record<string, string>>;
      readonly ms: number;
    }
  | { readonly kind: "filtered"; readonly ms: number }
  | { readonly kind: "failed"; readonly code: ErrorCode; readonly message: string };

const transformCodes = new Set<string>([
  "HOOKINBOX_TRANSFORM_FAILED",
  "HOOKINBOX_TRANSFORM_TIMEOUT",
  "HOOKINBOX_TRANSFORM_INVALID",
]);

/**
 * The transforms of an event's delivery to a destination, in the order they run: the route's
 * (the first route, in configured order, that sends this event there), then the destination's.
 *
 * @example
 * ```ts
 * transformChain(destination, route.transformFor, claimed).map((t) => t.where);
 * // ["routes[0].transform", "destinations.app.transform"]
 * ```
 */
export function transformChain(
  destination: ResolvedDestination,
  routeTransform: RouteTransformLookup | undefined,
  event: PreparableEvent,
): ResolvedTransform[] {
  const fromRoute = routeTransform?.(destination.name, event.source, event.type, event.body);
  return [fromRoute, destination.transform].filter((t): t is ResolvedTransform => !!t);
}

/**
 * Prepares what a destination is sent for a stored event: the raw body and the allowlisted
 * headers, through the transforms of {@link transformChain} (each given a frozen copy); `failed`
 * with HOOKINBOX_TRANSFORM_FAILED, _TIMEOUT or _INVALID when one throws, hangs or returns a bad
 * shape. The stored event is never changed.
 *
 * @example
 * ```ts
 * const prepared = await prepareRequest(destination, route.transformFor, claimed);
 * if (prepared.kind === "filtered") … // done, nothing sent
 * ```
 */
export async function prepareRequest(
  destination: ResolvedDestination,
  routeTransform: RouteTransformLookup | undefined,
  event: PreparableEvent,
  chain: readonly ResolvedTransform[] = transformChain(destination, routeTransform, event),
): Promise<PreparedRequest> {
  const headers = forwardableHeaders(event.headers, destination.forwardHeaders);
  if (chain.length === 0) return { kind: "send", body: event.body, headers, ms: 0 };
  const started = performance.now();
  const subject = {
    id: event.eventId,
    source: event.source,
    type: event.type,
    receivedAt: new Date(idTime(event.eventId)).toISOString(),
    target: destination.name,
  };
  let request: Awaited<ReturnType<typeof runTransforms>>;
  try {
    request = await runTransforms(chain, subject, { body: event.body, headers });
  } catch (error) {
    if (!isHookinboxError(error) || !transformCodes.has(error.code)) throw error;
    return { kind: "failed", code: error.code, message: error.message };
  }
  const ms = performance.now() - started;
  if (request === null) return { kind: "filtered", ms };
  return { kind: "send", body: request.body, headers: request.headers, ms };
}

/**
 * The size and SHA-256 (hex) of a request body, as the attempt records what was sent.
 *
 * @example
 * ```ts
 * bodyDigest(new TextEncoder().encode("{}")); // { bytes: 2, sha256: "44136fa3…" }
 * ```
 */
export function bodyDigest(body: Uint8Array): { bytes: number; sha256: string } {
  return { bytes: body.byteLength, sha256: createHash("sha256").update(body).digest("hex") };
}

/**
 * What the attempt of a filtered delivery records: nothing sent, nothing answered, the time the
 * transforms took, and `filtered`.
 *
 * @example
 * ```ts
 * await store.completeDelivery({ ...base, now: now(), response: filteredResponse(3.2) });
 * ```
 */
export function filteredResponse(ms: number): AttemptResponse {
  return {
    status: null,
    headers: null,
    body: null,
    latencyMs: ms,
    errorClass: null,
    request: null,
    filtered: true,
  };
}
