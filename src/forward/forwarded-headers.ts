import { providerDefinitions } from "../providers/all.ts";
import type { ClaimedDelivery } from "../store/queue-types.ts";
import { activeTraceparent } from "../tracing/traceparent.ts";

/**
 * Headers that describe one HTTP connection, not the message (framing, hop-by-hop): the client
 * that sends a request owns them. A transform may not set them, and `hookinbox listen
 * --provider-headers` drops them from the provider's original headers.
 *
 * @example
 * ```ts
 * connectionHeaders.has("content-length"); // true
 * ```
 */
export const connectionHeaders: ReadonlySet<string> = new Set([
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "proxy-connection",
  "http2-settings",
]);

/**
 * True for an original header that hookinbox never forwards on its own, though a provider sends
 * it: the `webhook-*`/`svix-*` headers, which hookinbox's own Standard Webhooks signature replaces
 * (a destination verifies a Standard Webhooks, Clerk or Resend event with its own secret), and
 * `authorization`, a credential meant for hookinbox (Postmark, Okta, Pub/Sub), which a destination
 * that wants it names in `forwardHeaders`.
 *
 * @example
 * ```ts
 * heldBack("svix-signature"); // true
 * heldBack("stripe-signature"); // false
 * ```
 */
export function heldBack(name: string): boolean {
  return name.startsWith("webhook-") || name.startsWith("svix-") || name === "authorization";
}

/**
 * Original request headers forwarded to destinations: the content type and user agent, and each
 * provider's own signature, timestamp, id and event headers as its definition lists them
 * (`headers` in src/providers), so an app that verifies with the provider's SDK still can
 * (within the provider's timestamp window; see docs/forwarding.md for the providers whose
 * signature covers the URL). Everything else (cookies, proxies' headers, and what
 * {@link heldBack} names) is dropped.
 */
export const forwardedHeaderNames: ReadonlySet<string> = new Set([
  "content-type",
  "user-agent",
  ...providerDefinitions
    .flatMap((p) => [...p.headers.signature, ...(p.headers.context ?? [])])
    .filter((name) => !heldBack(name)),
]);

/**
 * The original request headers a destination is sent (and a transform sees): the allowlisted ones
 * and `extraAllowed` (the destination's `forwardHeaders`), lower-case, repeats joined with ", ".
 *
 * @example
 * ```ts
 * forwardableHeaders([["Stripe-Signature", "t=…"], ["Cookie", "a=b"]]); // { "stripe-signature": "t=…" }
 * ```
 */
export function forwardableHeaders(
  original: ReadonlyArray<readonly [string, string]>,
  extraAllowed: ReadonlySet<string> = new Set(),
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of original) {
    const key = name.toLowerCase();
    if (!forwardedHeaderNames.has(key) && !extraAllowed.has(key)) continue;
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
  }
  return headers;
}

/**
 * The headers of one forwarded request: the allowlisted original headers (plus the destination's
 * `forwardHeaders`), the destination's static `headers`, then hookinbox's own, which nothing
 * overrides: the Standard Webhooks signature headers, `hookinbox-hops` with its signature, and
 * `hookinbox-attempt`, `-replay`,
 * `-event-id`, `-source`, `-type` (percent-encoded when it is not plain visible ASCII: see
 * `typeHeaderValue`), `-delivery-id`. `original` replaces the allowlisted original headers (what
 * a transform returned).
 *
 * @example
 * ```ts
 * forwardHeaders(claimed, { authorization: "Bearer …" }, signature);
 * ```
 */
export function forwardHeaders(
  delivery: Pick<
    ClaimedDelivery,
    "headers" | "attempt" | "isReplay" | "eventId" | "id" | "source" | "type"
  >,
  staticHeaders: Readonly<Record<string, string>>,
  signature: Readonly<Record<string, string>>,
  extraAllowed: ReadonlySet<string> = new Set(),
  original: Readonly<Record<string, string>> = forwardableHeaders(delivery.headers, extraAllowed),
): Record<string, string> {
  const headers: Record<string, string> = { ...original };
  for (const [name, value] of Object.entries(staticHeaders)) headers[name.toLowerCase()] = value;
  headers["user-agent"] ??= "hookinbox";
  Object.assign(headers, signature);
  return Object.assign(headers, hookinboxHeaders(delivery));
}

/**
 * hookinbox's own headers of one delivery, the same on a forwarded request and a queue message:
 * `hookinbox-attempt`, `-replay`, `-event-id`, `-delivery-id`, `-source` and `-type`
 * (percent-encoded when it is not plain visible ASCII: see `typeHeaderValue`), and `traceparent`
 * when the attempt is traced.
 *
 * @example
 * ```ts
 * hookinboxHeaders(claimed)["hookinbox-attempt"]; // "1"
 * ```
 */
export function hookinboxHeaders(
  delivery: Pick<ClaimedDelivery, "attempt" | "isReplay" | "eventId" | "id" | "source" | "type">,
): Record<string, string> {
  const headers: Record<string, string> = {
    "hookinbox-attempt": String(delivery.attempt),
    "hookinbox-replay": delivery.isReplay ? "true" : "false",
    "hookinbox-event-id": delivery.eventId,
    "hookinbox-delivery-id": delivery.id,
    "hookinbox-source": delivery.source,
  };
  if (delivery.type !== null) headers["hookinbox-type"] = typeHeaderValue(delivery.type);
  // The attempt's span, when traced: the destination's own spans join the trace.
  const traceparent = activeTraceparent();
  if (traceparent !== null) headers.traceparent = traceparent;
  return headers;
}

/**
 * An event type as a `hookinbox-type` header value, which must be visible ASCII: the type as is
 * when every character is 0x21–0x7E other than `%`, else every UTF-8 byte outside that set (`%`,
 * space, control characters and non-ASCII) as `%XX`. A receiver gets the type back with
 * `decodeURIComponent` either way. Space is encoded too, since HTTP trims a value's leading and
 * trailing whitespace. A type holding a lone surrogate (not valid UTF-8) is sent with U+FFFD in
 * its place.
 *
 * @example
 * ```ts
 * typeHeaderValue("invoice.paid"); // "invoice.paid"
 * typeHeaderValue("café");         // "caf%C3%A9"
 * typeHeaderValue("a\nb 100%");    // "a%0Ab%20100%25"
 * ```
 */
export function typeHeaderValue(type: string): string {
  // encodeURIComponent writes each UTF-8 byte of a run as %XX; a lone surrogate, which it
  // refuses, becomes U+FFFD first through a UTF-8 round trip.
  return type.replace(/[^\x21-\x24\x26-\x7e]+/g, (run) =>
    encodeURIComponent(Buffer.from(run, "utf8").toString("utf8")),
  );
}

/** Response headers kept on the attempt record. */
export const recordedResponseHeaders = [
  "content-type",
  "content-length",
  "retry-after",
  "location",
  "x-request-id",
  "server",
  "date",
] as const;
