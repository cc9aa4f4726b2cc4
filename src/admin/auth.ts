import { createHash, timingSafeEqual } from "node:crypto";
import { type HookinboxError, hookinboxError } from "../errors.ts";
import { type AdminRouteEntry, isReadRoute } from "./route-table.ts";

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Checks an `Authorization: Bearer <token>` header in constant time (both sides are hashed first
 * so that their lengths do not leak).
 *
 * @example
 * ```ts
 * isAuthorized(headers.get("authorization"), config.admin.token); // true | false
 * ```
 */
export function isAuthorized(authorization: string | undefined, token: string): boolean {
  if (!authorization) return false;
  const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
  if (!match) return false;
  return timingSafeEqual(digest(match[1]!), digest(token));
}

/** What a caller may do: everything (the admin token, a session), or read (`admin.readToken`). */
export type AdminScope = "full" | "read";

/**
 * The one place the read-only scope is decided: a `read` caller may call the routes that only
 * read (`isReadRoute`: GETs over read-only operations, raw routes such as the event stream) and
 * gets `403 HOOKINBOX_ADMIN_READ_ONLY` for anything else; a `full` caller is never refused here.
 *
 * @example
 * ```ts
 * scopeRefusal("read", { method: "POST", path: "/api/replays", operation: replayWhere });
 * // HookinboxError HOOKINBOX_ADMIN_READ_ONLY
 * ```
 */
export function scopeRefusal(
  scope: AdminScope,
  route: AdminRouteEntry | "session",
): HookinboxError | null {
  if (scope === "full") return null;
  // The dashboard's session is the admin token's: the read token never signs one in.
  if (route !== "session" && isReadRoute(route)) return null;
  return hookinboxError("HOOKINBOX_ADMIN_READ_ONLY");
}
