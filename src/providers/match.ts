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

/**
 * Like {@link findMatchingSecret}, for schemes where one secret yields several acceptable MACs
 * (the signed URL spelled with and without its port, a URL before and after decoding). `macs`
 * returns every MAC for one key; each is compared to every candidate in constant time.
 *
 * @throws HookinboxError HOOKINBOX_SIGNATURE_MISMATCH when nothing matches, or
 *   HOOKINBOX_SOURCE_NO_ACTIVE_SECRET when no active secret could be used as a key.
 * @example
 * ```ts
 * const index = findMatchingSecretAmong(secrets, (s) => s, (key) => urls.map((u) => mac(key, u)), sigs);
 * ```
 */
export function findMatchingSecretAmong<K>(
  secrets: readonly ActiveSecret[],
  keyOf: (secret: string) => K | undefined,
  macs: (key: K) => readonly Uint8Array[],
  candidates: readonly Uint8Array[],
): number {
  let usable = 0;
  for (const secret of secrets) {
    const key = keyOf(secret.value);
    if (key === undefined) continue;
    usable++;
    for (const expected of macs(key)) {
      for (const candidate of candidates) {
        if (constantTimeEqual(expected, candidate)) return secret.index;
      }
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

/**
 * A secret used as is (UTF-8), skipping empty ones: the key function of most HMAC schemes.
 *
 * @example
 * ```ts
 * findMatchingSecret(secrets, utf8Secret, (key) => hmac("sha256", key, [body]), sigs);
 * ```
 */
export function utf8Secret(secret: string): string | undefined {
  return secret.length > 0 ? secret : undefined;
}

/**
 * Reads a required signature header.
 *
 * @throws HookinboxError HOOKINBOX_SIGNATURE_MISSING when it is absent or blank.
 * @example
 * ```ts
 * const value = requireHeader(request.headers, "x-shopify-hmac-sha256");
 * ```
 */
export function requireHeader(headers: HeaderReader, name: string): string {
  const value = readHeader(headers, name);
  if (value === undefined) {
    throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", `expected header ${name}`);
  }
  return value;
}

/**
 * Strips a required `<tag>=` prefix from a signature header value (`sha256=…`, `v0=…`).
 *
 * @throws HookinboxError HOOKINBOX_SIGNATURE_MALFORMED when the value has no `=`, or
 *   HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED when the tag before it is not `tag`.
 * @example
 * ```ts
 * taggedValue("v0=abcd", "v0", "x-slack-signature"); // "abcd"
 * ```
 */
export function taggedValue(value: string, tag: string, name: string): string {
  const eq = value.indexOf("=");
  if (eq < 0) throw hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", `expected ${tag}=… in ${name}`);
  if (value.slice(0, eq) !== tag) {
    throw hookinboxError("HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED", `expected ${tag}=… in ${name}`);
  }
  return value.slice(eq + 1);
}

/**
 * Reads a required signed-timestamp header.
 *
 * @throws HookinboxError HOOKINBOX_TIMESTAMP_MISSING when it is absent or blank.
 * @example
 * ```ts
 * const timestamp = requireTimestampHeader(request.headers, "x-slack-request-timestamp");
 * ```
 */
export function requireTimestampHeader(headers: HeaderReader, name: string): string {
  const value = readHeader(headers, name);
  if (value === undefined) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MISSING", `expected header ${name}`);
  }
  return value;
}
