import type { ClaimedDelivery } from "../store/queue-types.ts";

/**
 * Original request headers forwarded to destinations: the content type and user agent, and each
 * provider's own signature, timestamp, id and event headers, so an app that verifies with the
 * provider's SDK still can (within the provider's timestamp window; see docs/forwarding.md for
 * the providers whose signature covers the URL). Everything else (cookies, proxies' headers,
 * the original `webhook-*`/`svix-*` headers, which hookinbox's own signature replaces) is dropped.
 */
export const forwardedHeaderNames: ReadonlySet<string> = new Set([
  "content-type",
  "user-agent",
  // Stripe
  "stripe-signature",
  // GitHub
  "x-github-event",
  "x-github-delivery",
  "x-github-hook-id",
  "x-github-hook-installation-target-id",
  "x-github-hook-installation-target-type",
  "x-hub-signature",
  "x-hub-signature-256",
  // Shopify
  "x-shopify-hmac-sha256",
  "x-shopify-topic",
  "x-shopify-shop-domain",
  "x-shopify-webhook-id",
  "x-shopify-event-id",
  "x-shopify-api-version",
  "x-shopify-triggered-at",
  // Slack
  "x-slack-signature",
  "x-slack-request-timestamp",
  // Twilio (signs the URL too)
  "x-twilio-signature",
  // HubSpot (v3 signs the URL too)
  "x-hubspot-signature",
  "x-hubspot-signature-v3",
  "x-hubspot-signature-version",
  "x-hubspot-request-timestamp",
  // Paddle
  "paddle-signature",
  // Square (signs the URL too)
  "x-square-hmacsha256-signature",
  "x-square-signature",
  // Zoom
  "x-zm-signature",
  "x-zm-request-timestamp",
  // Linear
  "linear-signature",
  "linear-delivery",
  "linear-event",
  // Discord
  "x-signature-ed25519",
  "x-signature-timestamp",
  // GitLab
  "x-gitlab-token",
  "x-gitlab-event",
  "x-gitlab-event-uuid",
  "x-gitlab-webhook-uuid",
  "x-gitlab-instance",
  // Twitch
  "twitch-eventsub-message-id",
  "twitch-eventsub-message-retry",
  "twitch-eventsub-message-type",
  "twitch-eventsub-message-signature",
  "twitch-eventsub-message-timestamp",
  "twitch-eventsub-subscription-type",
  "twitch-eventsub-subscription-version",
  // Mercado Pago
  "x-signature",
  "x-request-id",
]);

/**
 * The headers of one forwarded request: the allowlisted original headers (plus the destination's
 * `forwardHeaders`), the destination's static `headers`, then hookinbox's own, which nothing
 * overrides: the Standard Webhooks signature headers, `hookinbox-hops` with its signature, and
 * `hookinbox-attempt`, `-replay`,
 * `-event-id`, `-source`, `-type` (percent-encoded when it is not plain visible ASCII: see
 * `typeHeaderValue`), `-delivery-id`.
 *
 * @example
 * ```ts
 * forwardHeaders(claimed, { authorization: "Bearer …" }, signature);
 * ```
 */
export function forwardHeaders(
  delivery: ClaimedDelivery,
  staticHeaders: Readonly<Record<string, string>>,
  signature: Readonly<Record<string, string>>,
  extraAllowed: ReadonlySet<string> = new Set(),
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of delivery.headers) {
    const key = name.toLowerCase();
    if (!forwardedHeaderNames.has(key) && !extraAllowed.has(key)) continue;
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
  }
  for (const [name, value] of Object.entries(staticHeaders)) headers[name.toLowerCase()] = value;
  headers["user-agent"] ??= "hookinbox";
  Object.assign(headers, signature);
  headers["hookinbox-attempt"] = String(delivery.attempt);
  headers["hookinbox-replay"] = delivery.isReplay ? "true" : "false";
  headers["hookinbox-event-id"] = delivery.eventId;
  headers["hookinbox-delivery-id"] = delivery.id;
  headers["hookinbox-source"] = delivery.source;
  if (delivery.type !== null) headers["hookinbox-type"] = typeHeaderValue(delivery.type);
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
