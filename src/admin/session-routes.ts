import { z } from "zod";
import { type HookinboxError, hookinboxError } from "../errors.ts";
import type { RequestHeaders } from "../ingest/headers.ts";
import { type InboxResponse, jsonResponse } from "../ingest/request.ts";
import type { AdminContext, AdminHost } from "./admin-host.ts";
import { isAuthorized } from "./auth.ts";
import { jsonBody } from "./params.ts";
import {
  type AdminCaller,
  authenticate,
  createSessions,
  overTls,
  type RequestOrigin,
  type Sessions,
  sameOrigin,
  setCookie,
} from "./session.ts";

/**
 * `POST /api/session`: the admin token, sent once in the body (never in a URL), exchanged for
 * the session cookie.
 *
 * @example
 * ```ts
 * signInBody.parse({ token: "…" });
 * ```
 */
export const signInBody = z.object({ token: z.string().min(1).max(4096) }).strict();

const sessionsByHost = new WeakMap<AdminHost, Sessions>();

function sessionsOf(host: AdminHost, token: string): Sessions {
  let sessions = sessionsByHost.get(host);
  if (!sessions) {
    sessions = createSessions(token, host.now);
    sessionsByHost.set(host, sessions);
  }
  return sessions;
}

/**
 * Who calls the admin API (Bearer token or session cookie with CSRF on writes), or the error to
 * answer. See `authenticate` in src/admin/session.ts.
 *
 * @example
 * ```ts
 * const caller = authenticateAdmin(context, "GET", headers);
 * ```
 */
export function authenticateAdmin(
  context: AdminContext & { readonly token: string },
  method: string,
  headers: RequestHeaders,
): AdminCaller | HookinboxError {
  return authenticate(
    sessionsOf(context.host, context.token),
    context.token,
    method,
    headers,
    requestOrigin(context),
  );
}

const noStore = { "cache-control": "no-store" };

/** The TCP peer and the proxies whose forwarded headers are believed. */
function requestOrigin(context: AdminContext): RequestOrigin {
  return {
    remoteAddress: context.remoteAddress ?? null,
    trustedProxies: context.host.config.http.trustedProxies,
  };
}

/**
 * `/api/session`: `POST` signs in (body `{ "token": "<admin token>" }`; 201 with the CSRF token
 * and a `Set-Cookie`), `GET` tells the signed-in page its CSRF token again (after a reload),
 * `DELETE` signs out (clears the cookie; a write, so it needs the CSRF header like any other).
 * Returns null for any other path.
 *
 * @example
 * ```ts
 * const answer = await handleSessionRoute(context, "POST", url, headers, body);
 * ```
 */
export async function handleSessionRoute(
  context: AdminContext & { readonly token: string },
  method: string,
  url: URL,
  headers: RequestHeaders,
  body: Uint8Array,
): Promise<InboxResponse | null> {
  if (url.pathname !== "/api/session") return null;
  const { host, token } = context;
  const sessions = sessionsOf(host, token);
  const from = requestOrigin(context);
  const secure = overTls(headers, from);
  if (method === "POST") {
    // Login CSRF: another site must not sign a browser in to this dashboard either.
    if (!sameOrigin(headers, from)) throw hookinboxError("HOOKINBOX_CSRF_FAILED");
    const parsed = signInBody.safeParse(jsonBody(body));
    if (!parsed.success)
      throw hookinboxError("HOOKINBOX_QUERY_INVALID", "the body must be { token: string }");
    if (!isAuthorized(`Bearer ${parsed.data.token}`, token))
      throw hookinboxError("HOOKINBOX_ADMIN_UNAUTHORIZED");
    const session = sessions.issue();
    const response = jsonResponse(201, {
      csrfToken: session.csrfToken,
      expiresAt: new Date(session.expiresAt).toISOString(),
    });
    return {
      ...response,
      headers: { ...response.headers, ...noStore, "set-cookie": setCookie(session, secure) },
    };
  }
  if (method !== "GET" && method !== "DELETE") throw hookinboxError("HOOKINBOX_METHOD_NOT_ALLOWED");
  const caller = authenticate(sessions, token, method, headers, from);
  if (caller instanceof Error) throw caller;
  if (caller.kind !== "session") {
    throw hookinboxError("HOOKINBOX_QUERY_INVALID", "a Bearer token has no dashboard session");
  }
  if (method === "GET") {
    const response = jsonResponse(200, {
      csrfToken: sessions.csrfTokenOf(caller.nonce),
      expiresAt: new Date(caller.expiresAt).toISOString(),
    });
    return { ...response, headers: { ...response.headers, ...noStore } };
  }
  sessions.revoke(caller.nonce, caller.expiresAt);
  return { status: 204, headers: { "set-cookie": setCookie(null, secure) }, body: "" };
}
