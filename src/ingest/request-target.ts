/**
 * The request target, parsed defensively. Only origin-form targets (`/path?query`) of printable
 * ASCII are served. Absolute-form (`http://host/path`), asterisk-form (`*`), dot segments (raw
 * or percent-encoded), encoded slashes, backslashes and NULs, fragments and malformed
 * percent-escapes are refused before any routing, so a proxy that forwards only raw
 * `/webhooks/*` prefixes can never reach the admin API or the health checks through hookinbox.
 * Parsing never throws.
 */
export type RequestTarget =
  /** `/webhooks/<source>` (a trailing slash is allowed). */
  | { readonly kind: "webhook"; readonly source: string }
  /** Any other origin-form target: the raw (still percent-encoded) path and the query. */
  | { readonly kind: "path"; readonly pathname: string; readonly search: string }
  /** Refused: answer 400 `HOOKINBOX_REQUEST_TARGET_INVALID` with this detail. */
  | { readonly kind: "invalid"; readonly detail: string };

// Printable ASCII except "#" (a fragment is never sent) and "\" (some proxies read it as "/").
const printable = /^\/[\x21\x22\x24-\x5b\x5d-\x7e]*$/;
const badEscape = /%(?![0-9A-Fa-f]{2})/;
const dotSegment = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;
const encodedSeparator = /%(?:2f|5c|00)/i;
const webhookPath = /^\/webhooks\/([^/]+)\/?$/;

/**
 * Parses a request target as received on the request line.
 *
 * @example
 * ```ts
 * parseRequestTarget("/webhooks/stripe");        // { kind: "webhook", source: "stripe" }
 * parseRequestTarget("/api/events?limit=5");     // { kind: "path", pathname: "/api/events", search: "?limit=5" }
 * parseRequestTarget("/webhooks/../api/events"); // { kind: "invalid", detail: "dot segment in the path" }
 * ```
 */
export function parseRequestTarget(target: string): RequestTarget {
  if (typeof target !== "string" || !target.startsWith("/")) {
    return {
      kind: "invalid",
      detail:
        target === "*"
          ? "asterisk-form is not served"
          : "only origin-form targets (/path?query) are served",
    };
  }
  if (!printable.test(target)) {
    return { kind: "invalid", detail: "the target holds a character that is not printable ASCII" };
  }
  if (badEscape.test(target)) return { kind: "invalid", detail: "malformed percent-escape" };
  const queryAt = target.indexOf("?");
  const pathname = queryAt === -1 ? target : target.slice(0, queryAt);
  if (dotSegment.test(pathname)) return { kind: "invalid", detail: "dot segment in the path" };
  if (encodedSeparator.test(pathname)) {
    return { kind: "invalid", detail: "encoded slash, backslash or NUL in the path" };
  }
  const hook = webhookPath.exec(pathname);
  // A segment whose escapes are not UTF-8 is kept as sent: it then names no source (404).
  if (hook) return { kind: "webhook", source: decodePathSegment(hook[1]!) ?? hook[1]! };
  return { kind: "path", pathname, search: queryAt === -1 ? "" : target.slice(queryAt) };
}

/**
 * Decodes one percent-encoded path segment; null when its escapes are malformed or not UTF-8
 * (`decodeURIComponent` would throw).
 *
 * @example
 * ```ts
 * decodePathSegment("evt%5F1"); // "evt_1"
 * decodePathSegment("%ZZ");     // null
 * ```
 */
export function decodePathSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
