import { forwardHeaders } from "./forwarded-headers.ts";
import { hopsHeader, hopsSignatureHeader, storedHops } from "./hops.ts";
import type { ResolvedDestination } from "./resolve-destinations.ts";
import { stableDeliveryId } from "./sign.ts";
import {
  bodyDigest,
  type PreparableEvent,
  prepareRequest,
  type RouteTransformLookup,
  transformChain,
} from "./transform-request.ts";

/** What one destination would be sent for an event now, as `transform test` and the dashboard show it. */
export interface TargetPreview {
  readonly target: string;
  /** The transforms that run, in order (config keys such as `routes[0].transform`). */
  readonly transforms: readonly string[];
  /** `send`: the request below; `filtered`: nothing would be sent; `failed`: a transform failed. */
  readonly outcome: "send" | "filtered" | "failed";
  /**
   * The request headers, as sent except that signature values and the destination's static
   * header values (credentials, often) are replaced by placeholders.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /** The body as UTF-8 text, or null when it is not valid UTF-8 (then `base64`). */
  readonly body?: string | null;
  readonly base64?: string;
  readonly bytes?: number;
  readonly sha256?: string;
  readonly error?: { readonly code: string; readonly message: string };
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const signedWhenSent = "(signed when sent)";

/**
 * Previews what a destination would be sent for a stored event now: the current transforms run on
 * a frozen copy (as an attempt would run them) and nothing is sent, signed or stored. The preview's
 * headers are those of a first attempt; signature values and the destination's static header
 * values are placeholders, so that the preview shows no credential.
 *
 * @example
 * ```ts
 * const preview = await previewTarget(destination, config.route.transformFor, storedEvent);
 * preview.outcome; // "send" | "filtered" | "failed"
 * ```
 */
export async function previewTarget(
  destination: ResolvedDestination,
  routeTransform: RouteTransformLookup | undefined,
  event: PreparableEvent,
): Promise<TargetPreview> {
  const chain = transformChain(destination, routeTransform, event);
  const base = { target: destination.name, transforms: chain.map((t) => t.where) };
  const prepared = await prepareRequest(destination, routeTransform, event, chain);
  if (prepared.kind === "failed")
    return {
      ...base,
      outcome: "failed",
      error: { code: prepared.code, message: prepared.message },
    };
  if (prepared.kind === "filtered") return { ...base, outcome: "filtered" };
  const id = stableDeliveryId(event.eventId, destination.name);
  const placeholders = {
    "webhook-id": id,
    "webhook-timestamp": "(when sent)",
    "webhook-signature": signedWhenSent,
    [hopsHeader]: String((storedHops(event.headers) ?? 0) + 1),
    [hopsSignatureHeader]: signedWhenSent,
  };
  const staticHeaders = Object.fromEntries(
    Object.keys(destination.headers).map((name) => [name, "(configured)"]),
  );
  const headers = forwardHeaders(
    {
      ...event,
      headers: [...event.headers].map(([n, v]) => [n, v] as [string, string]),
      id: "(preview)",
      attempt: 1,
      isReplay: false,
    },
    staticHeaders,
    placeholders,
    destination.forwardHeaders,
    prepared.headers,
  );
  let body: string | null;
  try {
    body = strictUtf8.decode(prepared.body);
  } catch {
    body = null;
  }
  return {
    ...base,
    outcome: "send",
    headers,
    body,
    ...(body === null ? { base64: Buffer.from(prepared.body).toString("base64") } : {}),
    ...bodyDigest(prepared.body),
  };
}
