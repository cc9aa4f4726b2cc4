/**
 * The part every HMAC scheme shares once its header is parsed: try each active secret against
 * each candidate signature, in constant time per comparison, and fail closed.
 */

import { hookinboxError } from "../errors.js";
import { constantTimeEqual } from "./crypto.js";
import type { ActiveSecret, HeaderReader } from "./types.js";

/**
 * Throws HOOKINBOX_SOURCE_NO_ACTIVE_SECRET when no secret is active, so a source whose
 * secrets have all expired (or were never set) refuses events instead of accepting them.
 *
 * @example
 * ```ts
 * requireSecrets(secrets); // first line of every verifier
 * ```
 */
export function requireSecrets(secrets: readonly ActiveSecret[]): void {
  if (secrets.length === 0) throw hookinboxError("HOOKINBOX_SOURCE_NO_ACTIVE_SECRET");
}

/**
 * Reads a header and treats an empty or all-whitespace value as absent.
 *
 * @example
 * ```ts
 * const value = readHeader(request.headers, "stripe-signature"); // string | undefined
 * ```
 */
export function readHeader(headers: HeaderReader, name: string): string | undefined {
  const value = headers.get(name);
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed.length === 0 ? undefined : trimmed;
}

/**
 * Finds the first active secret whose MAC equals one of the candidate signatures and returns
 * its configured index. `keyOf` turns a secret into key bytes (or `undefined` when the secret
 * cannot be decoded; such secrets are skipped). Each MAC is computed once per secret and
 * compared to every candidate with {@link constantTimeEqual}.
 *
 * @throws HookinboxError HOOKINBOX_SIGNATURE_MISMATCH when nothing matches, or
 *   HOOKINBOX_SOURCE_NO_ACTIVE_SECRET when no active secret could be used as a key.
 * @example
 * ```ts
 * const index = findMatchingSecret(secrets, (s) => s, (key) => hmac("sha256", key, parts), sigs);
 * ```
 */
export function findMatchingSecret<K>(
  secrets: readonly ActiveSecret[],
  keyOf: (secret: string) => K | undefined,
  mac: (key: K) => Uint8Array,
  candidates: readonly Uint8Array[],
): number {
  let usable = 0;
  for (const secret of secrets) {
    const key = keyOf(secret.value);
    if (key === undefined) continue;
    usable++;
    const expected = mac(key);
    for (const candidate of candidates) {
      if (constantTimeEqual(expected, candidate)) return secret.index;
    }
  }
  if (usable === 0) {
    throw hookinboxError(
      "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
      "no active secret is valid in the configured encoding",
    );
  }
  throw hookinboxError("HOOKINBOX_SIGNATURE_MISMATCH");
}
