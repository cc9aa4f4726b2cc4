/**
 * Sender-side helpers for samples: HMACs and deterministic fake ids. Written apart from the
 * verifiers in src/providers on purpose, so a sample that verifies is a second implementation
 * agreeing with the first.
 */

import { createHash, createHmac, randomBytes } from "node:crypto";

/**
 * HMAC of `data` with `key`, hex or base64.
 *
 * @example
 * ```ts
 * mac("sha256", "secret", "body", "hex"); // "f8b2…"
 * ```
 */
export function mac(
  algorithm: "sha1" | "sha256",
  key: string | Buffer,
  data: string,
  encoding: "hex" | "base64",
): string {
  return createHmac(algorithm, key).update(data).digest(encoding);
}

/**
 * `length` decimal digits derived from `seed` (stable: the same seed gives the same digits,
 * never a leading zero), for numeric ids the provider would assign.
 *
 * @example
 * ```ts
 * digits("evt_1", 8); // e.g. "51839210"
 * ```
 */
export function digits(seed: string, length: number): string {
  let out = "";
  let block = createHash("sha256").update(seed).digest();
  while (out.length < length) {
    for (const byte of block) out += String(byte % 10);
    block = createHash("sha256").update(block).digest();
  }
  const text = out.slice(0, length);
  return text.startsWith("0") ? `1${text.slice(1)}` : text;
}

/**
 * A random token of `length` characters from `alphabet` (for `newId()`).
 *
 * @example
 * ```ts
 * randomToken(24); // "a8Xk…"
 * ```
 */
export function randomToken(
  length: number,
  alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const byte of bytes) out += alphabet[byte % alphabet.length];
  return out;
}

/**
 * Seconds since the epoch, floored.
 *
 * @example
 * ```ts
 * seconds(1_700_000_000_999); // 1700000000
 * ```
 */
export function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/**
 * Alters one byte of a body inside a signed value: the last digit becomes another digit (or,
 * without digits, the last letter changes case). The result has the same length and stays
 * valid JSON / form encoding.
 *
 * @example
 * ```ts
 * alterOneByte('{"amount":1000}'); // '{"amount":1001}'
 * ```
 */
export function alterOneByte(body: string): string {
  for (let i = body.length - 1; i >= 0; i--) {
    const c = body.charCodeAt(i);
    if (c >= 48 && c <= 57)
      return `${body.slice(0, i)}${c === 57 ? "8" : String.fromCharCode(c + 1)}${body.slice(i + 1)}`;
  }
  for (let i = body.length - 1; i >= 0; i--) {
    const ch = body[i] ?? "";
    if (ch.toLowerCase() !== ch.toUpperCase()) {
      const flipped = ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase();
      return `${body.slice(0, i)}${flipped}${body.slice(i + 1)}`;
    }
  }
  return `${body.slice(0, -1)} `;
}

/**
 * The v0 scheme Slack and Zoom share: `v0=<hex HMAC-SHA256 of "v0:{ts}:{body}">` in
 * `signatureHeader`, the integer seconds in `timestampHeader`.
 *
 * @example
 * ```ts
 * v0Headers("secret", 1700000000_000, "{}", "x-zm-signature", "x-zm-request-timestamp");
 * ```
 */
export function v0Headers(
  secret: string,
  nowMs: number,
  body: string,
  signatureHeader: string,
  timestampHeader: string,
): Record<string, string> {
  const t = seconds(nowMs);
  return {
    [timestampHeader]: String(t),
    [signatureHeader]: `v0=${mac("sha256", secret, `v0:${t}:${body}`, "hex")}`,
  };
}
