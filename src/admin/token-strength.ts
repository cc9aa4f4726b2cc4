import { hookinboxError } from "../errors.ts";

/** The shortest admin token accepted. */
export const adminTokenMinLength = 32;
/** The fewest distinct characters an admin token may have (`aaaa…`, `abab…` are refused). */
export const adminTokenMinDistinct = 8;

/**
 * Refuses a weak admin token at boot with one line: `HOOKINBOX_ADMIN_TOKEN_WEAK`, what is wrong
 * and the command that makes a strong one. Weak: shorter than 32 characters, or fewer than 8
 * distinct characters. The token the gateway generates (and `openssl rand -hex 32`) passes.
 *
 * @example
 * ```ts
 * assertStrongAdminToken("secret"); // throws HOOKINBOX_ADMIN_TOKEN_WEAK
 * ```
 */
export function assertStrongAdminToken(token: string): void {
  const distinct = new Set(token).size;
  const what =
    token.length < adminTokenMinLength
      ? `it has ${token.length} characters, at least ${adminTokenMinLength} are needed`
      : distinct < adminTokenMinDistinct
        ? `it has only ${distinct} distinct characters, at least ${adminTokenMinDistinct} are needed`
        : null;
  if (what === null) return;
  throw hookinboxError(
    "HOOKINBOX_ADMIN_TOKEN_WEAK",
    `${what}; generate one with: openssl rand -hex 32 (set it as HOOKINBOX_ADMIN_TOKEN or admin.token)`,
  );
}

/**
 * Refuses, at boot, a weak admin token or read-only token (`HOOKINBOX_ADMIN_TOKEN_WEAK`) and a
 * read-only token equal to the admin token (`HOOKINBOX_CONFIG_INVALID`: it would grant writes).
 *
 * @example
 * ```ts
 * assertAdminTokens(process.env.HOOKINBOX_ADMIN_TOKEN ?? null, config.admin.readToken);
 * ```
 */
export function assertAdminTokens(adminToken: string | null, readToken: string | null): void {
  if (adminToken !== null) assertStrongAdminToken(adminToken);
  if (readToken === null) return;
  assertStrongAdminToken(readToken);
  if (readToken === adminToken)
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      "admin.readToken must differ from admin.token",
    );
}
