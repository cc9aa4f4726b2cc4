import type { InboxResponse } from "../ingest/request.ts";

/** Whether a request URL (a path, or an absolute URL) is under `/api`. */
export function isApiUrl(url: string): boolean {
  const path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, "").split(/[?#]/)[0] ?? "";
  return path === "/api" || path.startsWith("/api/");
}

/**
 * Every `/api` answer, errors included: never cached (it holds events, tokens' sessions and
 * CSRF tokens) and never sniffed into another content type.
 *
 * @example
 * ```ts
 * const answer = isApiUrl(request.url) ? withApiHeaders(response) : response;
 * answer.headers["cache-control"]; // "no-store"
 * ```
 */
export function withApiHeaders(response: InboxResponse): InboxResponse {
  return {
    ...response,
    headers: {
      ...response.headers,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  };
}
