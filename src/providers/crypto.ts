/**
 * Shared byte-level helpers for provider schemes: HMAC over several parts without
 * concatenating them, a constant-time comparison, and strict hex/base64 decoding.
 * Nothing here throws on attacker-controlled input: malformed input decodes to `undefined`.
 */

import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The HMAC hash functions provider schemes use.
 *
 * @example
 * ```ts
 * const algorithm: HmacAlgorithm = "sha256";
 * ```
 */
export type HmacAlgorithm = "sha1" | "sha256" | "sha512";

/**
 * How a secret string is turned into key bytes: as its UTF-8 bytes, or decoded from base64 or hex.
 *
 * @example
 * ```ts
 * decodeSecret("c2VjcmV0", "base64" satisfies SecretEncoding);
 * ```
 */
export type SecretEncoding = "utf8" | "base64" | "hex";

/**
 * Wraps a `Uint8Array` as a `Buffer` over the same memory (no copy).
 *
 * @example
 * ```ts
 * const buf = asBuffer(request.body); // shares request.body's memory
 * ```
 */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Computes an HMAC over the concatenation of `parts`, feeding each part to the MAC in turn so
 * the signed content is never copied into one buffer. Strings are encoded as UTF-8.
 *
 * @example
 * ```ts
 * const mac = hmac("sha256", "whsec_…", [timestamp, ".", request.body]);
 * mac.toString("hex");
 * ```
 */
export function hmac(
  algorithm: HmacAlgorithm,
  key: Uint8Array | string,
  parts: readonly (Uint8Array | string)[],
): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/**
 * Compares two byte strings in time that depends only on the length of `expected` (the
 * locally computed value, whose length is public). Inputs of different lengths are
 * compared against themselves and reported unequal, so a short or long input does not
 * return measurably earlier than a same-length wrong one.
 *
 * @example
 * ```ts
 * if (constantTimeEqual(computedMac, decodedSignature)) accept();
 * ```
 */
export function constantTimeEqual(expected: Uint8Array, received: Uint8Array): boolean {
  if (expected.byteLength !== received.byteLength) {
    timingSafeEqual(expected, expected);
    return false;
  }
  return timingSafeEqual(expected, received);
}

const HEX = /^[0-9a-fA-F]*$/;

/**
 * Decodes a hex string (either case, even length, nothing else), or returns `undefined`
 * when the input is not exactly that.
 *
 * @example
 * ```ts
 * decodeHex("00ff"); // <Buffer 00 ff>
 * decodeHex("0g");   // undefined
 * ```
 */
export function decodeHex(value: string): Buffer | undefined {
  // Node's decoder silently truncates at a bad pair and even maps some non-ASCII characters
  // (U+FF41 "ａ" decodes like "A"), so the alphabet is checked first.
  if ((value.length & 1) !== 0 || !HEX.test(value)) return undefined;
  return Buffer.from(value, "hex");
}

/**
 * Decodes canonical, padded, standard-alphabet base64 (RFC 4648 §4), or returns `undefined`.
 * Whitespace, the URL-safe alphabet, missing padding and non-zero trailing bits are rejected,
 * so each byte string has exactly one accepted encoding.
 *
 * @example
 * ```ts
 * decodeBase64("aGk="); // <Buffer 68 69>
 * decodeBase64("aGk");  // undefined (no padding)
 * ```
 */
export function decodeBase64(value: string): Buffer | undefined {
  if ((value.length & 3) !== 0) return undefined;
  const bytes = Buffer.from(value, "base64");
  // Node's decoder is lenient; re-encoding proves the input was the canonical form.
  return bytes.toString("base64") === value ? bytes : undefined;
}

/**
 * Turns a configured secret string into key bytes: UTF-8 as is, or strictly decoded hex or
 * base64. Returns `undefined` when the secret is not valid in that encoding or decodes to
 * zero bytes. Config code can call this at boot to reject unusable secrets early.
 *
 * @example
 * ```ts
 * decodeSecret("c2VjcmV0", "base64"); // <Buffer 73 65 63 72 65 74>
 * decodeSecret("not hex", "hex");     // undefined
 * ```
 */
export function decodeSecret(value: string, encoding: SecretEncoding): Buffer | undefined {
  const bytes =
    encoding === "utf8"
      ? Buffer.from(value, "utf8")
      : encoding === "hex"
        ? decodeHex(value)
        : decodeBase64(value);
  return bytes !== undefined && bytes.length > 0 ? bytes : undefined;
}

/**
 * Memoises a secret decoder (to key bytes, or a public `KeyObject`) so each configured secret is
 * decoded once, not on every request.
 * The cache is small and cleared when it fills (secrets rotate rarely; a few are live at once).
 * Undecodable secrets are cached as `null` and reported as `undefined`.
 *
 * @example
 * ```ts
 * const keyOf = memoizeKeys((s) => decodeSecret(s, "base64"));
 * const key = keyOf(secret.value); // Buffer | undefined
 * ```
 */
export function memoizeKeys<K extends object = Buffer>(
  decode: (secret: string) => K | undefined,
  maxEntries = 64,
): (secret: string) => K | undefined {
  const cache = new Map<string, K | null>();
  return (secret) => {
    const hit = cache.get(secret);
    if (hit !== undefined) return hit ?? undefined;
    const key = decode(secret);
    if (cache.size >= maxEntries) cache.clear();
    cache.set(secret, key ?? null);
    return key;
  };
}
