import { canonicalHeaders, sha256 } from "../audit/leaf.ts";

/**
 * The digests a purged event keeps: SHA-256 of its body and of its canonical headers, exactly
 * what its audit leaf committed to, so the leaf can still be recomputed after the purge.
 *
 * @example
 * ```ts
 * const { bodySha256, headersSha256 } = purgeDigests(row.body, JSON.parse(row.headers));
 * ```
 */
export function purgeDigests(
  body: Uint8Array,
  headers: ReadonlyArray<readonly [string, string]>,
): { bodySha256: Buffer; headersSha256: Buffer } {
  return { bodySha256: sha256(body), headersSha256: sha256(canonicalHeaders(headers)) };
}
