import { hookinboxError } from "../errors.ts";
import type { RequestHeaders } from "../ingest/headers.ts";
import { clientAddress } from "../ingest/ip-allow.ts";
import { createRejectLimiter, type RejectLimiter } from "../ingest/reject-limiter.ts";
import { errorResponse, type InboxResponse } from "../ingest/request.ts";
import type { AdminHost } from "./admin-host.ts";

const limiters = new WeakMap<AdminHost, RejectLimiter>();

/**
 * The per-address count of wrong admin tokens (dashboard sign-ins and Bearer tokens alike) of one
 * inbox: past `admin.authLimit.max` (default 10) in its window (default 1m), every `/api` request from that address is
 * answered `429 HOOKINBOX_ADMIN_AUTH_LIMITED` with `Retry-After`, before the token is looked at
 * (so the right token cannot be told from a wrong one by a blocked guesser). Other addresses are
 * not affected. The client is the TCP peer, or the X-Forwarded-For client a trusted proxy names.
 *
 * @example
 * ```ts
 * const limit = adminAuthLimit(host, remoteAddress, headers);
 * const refused = limit.refusal(); // a 429 answer, or null
 * if (wrongToken) limit.recordFailure();
 * ```
 */
export function adminAuthLimit(
  host: AdminHost,
  remoteAddress: string | null,
  headers: RequestHeaders,
): { refusal(): InboxResponse | null; recordFailure(): void } {
  let limiter = limiters.get(host);
  if (!limiter) {
    limiter = createRejectLimiter(host.config.admin.authLimit);
    limiters.set(host, limiter);
  }
  const client = clientAddress(
    remoteAddress,
    headers.get("x-forwarded-for"),
    host.config.http.trustedProxies,
  );
  const counted = limiter;
  return {
    refusal() {
      const now = host.now();
      if (!counted.blocked(client, now)) return null;
      const error = hookinboxError("HOOKINBOX_ADMIN_AUTH_LIMITED");
      const response = errorResponse(error.status, error.code, error.message);
      const seconds = Math.max(1, Math.ceil(counted.retryAfterMs(client, now) / 1000));
      return { ...response, headers: { ...response.headers, "retry-after": String(seconds) } };
    },
    recordFailure() {
      counted.record(client, host.now());
    },
  };
}
