import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { type HookinboxError, hookinboxError } from "../errors.ts";
import type { RequestHeaders } from "../ingest/headers.ts";
import { type AddressList, normaliseAddress } from "../ingest/ip-allow.ts";
import { isAuthorized } from "./auth.ts";

/** The session cookie's name. */
export const sessionCookieName = "hookinbox_session";
/** The header a cookie-authenticated write echoes its CSRF token in. */
export const csrfHeaderName = "x-hookinbox-csrf";
/** How long a dashboard session lasts (12 hours); then the operator signs in again. */
export const sessionLifetimeMs = 12 * 60 * 60 * 1000;

/** How a request proved it may use the admin API. */
export type AdminCaller =
  | { readonly kind: "bearer" }
  | { readonly kind: "session"; readonly nonce: string; readonly expiresAt: number };

/** A signed-in session: what the browser keeps (cookie) and what the page echoes (CSRF token). */
export interface IssuedSession {
  readonly cookie: string;
  readonly csrfToken: string;
  readonly expiresAt: number;
}

const b64url = (bytes: Buffer) => bytes.toString("base64url");
const same = (a: string, b: string) => {
  const x = createHash("sha256").update(a).digest();
  const y = createHash("sha256").update(b).digest();
  return timingSafeEqual(x, y);
};

/**
 * Dashboard sessions, stateless: the cookie is `v1.<expiry>.<nonce>.<HMAC>` keyed by a hash of
 * the admin token, so every gateway process accepts it and a new admin token ends every session.
 * The CSRF token is another HMAC of the nonce. Sign-out revokes the nonce in this process (and
 * clears the cookie); the lifetime bounds the rest.
 *
 * @example
 * ```ts
 * const sessions = createSessions(adminToken, Date.now);
 * const { cookie, csrfToken } = sessions.issue();
 * sessions.verify(cookie); // { kind: "session", nonce, expiresAt }
 * ```
 */
export function createSessions(token: string, now: () => number) {
  const key = createHash("sha256").update(`hookinbox dashboard session\0${token}`).digest();
  const mac = (text: string) => b64url(createHmac("sha256", key).update(text).digest());
  const revoked = new Map<string, number>();
  const sweep = () => {
    const at = now();
    for (const [nonce, expiresAt] of revoked) if (expiresAt <= at) revoked.delete(nonce);
  };
  return {
    issue(): IssuedSession {
      const expiresAt = now() + sessionLifetimeMs;
      const nonce = b64url(randomBytes(18));
      const payload = `v1.${expiresAt.toString(36)}.${nonce}`;
      return {
        cookie: `${payload}.${mac(payload)}`,
        csrfToken: mac(`csrf.${nonce}`),
        expiresAt,
      };
    },
    /** The session a cookie value names, or the error to answer (forged, expired, signed out). */
    verify(value: string): AdminCaller | HookinboxError {
      const parts = value.split(".");
      if (parts.length !== 4 || parts[0] !== "v1")
        return hookinboxError("HOOKINBOX_SESSION_INVALID");
      const [, expiry, nonce, signature] = parts as [string, string, string, string];
      if (!same(signature, mac(`v1.${expiry}.${nonce}`)))
        return hookinboxError("HOOKINBOX_SESSION_INVALID");
      const expiresAt = Number.parseInt(expiry, 36);
      if (!(expiresAt > now()) || revoked.has(nonce))
        return hookinboxError("HOOKINBOX_SESSION_INVALID");
      return { kind: "session", nonce, expiresAt };
    },
    csrfTokenOf: (nonce: string) => mac(`csrf.${nonce}`),
    revoke(nonce: string, expiresAt: number) {
      sweep();
      revoked.set(nonce, expiresAt);
    },
  };
}

/** The sessions of one admin token. */
export type Sessions = ReturnType<typeof createSessions>;

/**
 * One cookie's value from a `Cookie` header, or undefined.
 *
 * @example
 * ```ts
 * cookieValue("a=1; hookinbox_session=v1.x", "hookinbox_session"); // "v1.x"
 * ```
 */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at !== -1 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** What session checks need to know about the request besides its headers. */
export interface RequestOrigin {
  /** The TCP peer's address (null when the host did not say). */
  readonly remoteAddress: string | null;
  /** `http.trustedProxies`: only they may say the request came over HTTPS. */
  readonly trustedProxies: AddressList | null;
}

/**
 * Whether the TCP peer is one of `http.trustedProxies`: only then are its `X-Forwarded-*`
 * headers believed (without the setting, or from any other address, they are ignored).
 *
 * @example
 * ```ts
 * fromTrustedProxy({ remoteAddress: "10.0.0.2", trustedProxies }); // true when 10.0.0.2 is listed
 * ```
 */
export function fromTrustedProxy(origin: RequestOrigin): boolean {
  if (origin.remoteAddress === null || !origin.trustedProxies) return false;
  return origin.trustedProxies.has(normaliseAddress(origin.remoteAddress));
}

/**
 * Whether the browser reached us over TLS: a trusted proxy's `X-Forwarded-Proto: https` (the
 * gateway itself speaks plain HTTP). Decides the cookie's `Secure` attribute.
 *
 * @example
 * ```ts
 * overTls(headers, { remoteAddress: "10.0.0.2", trustedProxies }); // true behind the proxy
 * ```
 */
export function overTls(headers: RequestHeaders, origin: RequestOrigin): boolean {
  const proto = headers.get("x-forwarded-proto");
  if (!proto || !fromTrustedProxy(origin)) return false;
  return proto.split(",")[0]!.trim().toLowerCase() === "https";
}

/**
 * The `Set-Cookie` value for a session (or, with `null`, the one that clears it): HttpOnly,
 * SameSite=Strict, Path=/, Max-Age bounded by the session lifetime, Secure over TLS.
 *
 * @example
 * ```ts
 * setCookie(session, true); // "hookinbox_session=v1…; Path=/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure"
 * ```
 */
export function setCookie(session: IssuedSession | null, secure: boolean): string {
  const value = session ? session.cookie : "";
  const maxAge = session ? Math.floor(sessionLifetimeMs / 1000) : 0;
  return `${sessionCookieName}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

/**
 * A browser write must come from the dashboard's own page: `Sec-Fetch-Site`, when sent, must be
 * `same-origin`, and `Origin`, when sent, must name the host the request was sent to: `Host`, or
 * `X-Forwarded-Host` when a trusted proxy (`http.trustedProxies`) sent the request.
 *
 * @example
 * ```ts
 * sameOrigin(headers, { remoteAddress, trustedProxies }); // false for a form posted from another site
 * ```
 */
export function sameOrigin(headers: RequestHeaders, from: RequestOrigin): boolean {
  const site = headers.get("sec-fetch-site");
  if (site !== undefined && site !== "same-origin") return false;
  const origin = headers.get("origin");
  if (origin === undefined) return true;
  const forwarded = fromTrustedProxy(from) ? headers.get("x-forwarded-host") : undefined;
  const host = forwarded ?? headers.get("host");
  try {
    return host !== undefined && new URL(origin).host === host.split(",")[0]!.trim();
  } catch {
    return false;
  }
}

const writeMethods = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Who is calling the admin API: a Bearer token (as before, no CSRF check since browsers never
 * attach it by themselves), or a session cookie, whose writes must also carry the session's CSRF
 * token in `X-Hookinbox-CSRF` and come from the same origin. Returns the error to answer when
 * neither holds.
 *
 * @example
 * ```ts
 * const caller = authenticate(sessions, token, "POST", headers, { remoteAddress, trustedProxies });
 * if (isHookinboxError(caller)) return errorResponse(caller.status, caller.code, caller.message);
 * ```
 */
export function authenticate(
  sessions: Sessions,
  token: string,
  method: string,
  headers: RequestHeaders,
  from: RequestOrigin,
): AdminCaller | HookinboxError {
  const authorization = headers.get("authorization");
  if (authorization !== undefined) {
    return isAuthorized(authorization, token)
      ? { kind: "bearer" }
      : hookinboxError("HOOKINBOX_ADMIN_UNAUTHORIZED");
  }
  const cookie = cookieValue(headers.get("cookie"), sessionCookieName);
  if (!cookie) return hookinboxError("HOOKINBOX_ADMIN_UNAUTHORIZED");
  const caller = sessions.verify(cookie);
  if (caller instanceof Error || caller.kind !== "session") return caller;
  if (writeMethods.has(method)) {
    const csrf = headers.get(csrfHeaderName);
    if (!csrf || !same(csrf, sessions.csrfTokenOf(caller.nonce)) || !sameOrigin(headers, from))
      return hookinboxError("HOOKINBOX_CSRF_FAILED");
  }
  return caller;
}
