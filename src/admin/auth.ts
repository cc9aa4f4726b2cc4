import { createHash, timingSafeEqual } from "node:crypto";

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
