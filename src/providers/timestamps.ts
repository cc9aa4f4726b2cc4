/**
 * Signed-timestamp helpers shared by the schemes that sign one: strict parsing of integer
 * timestamps and the replay window check.
 */

import { hookinboxError } from "../errors.js";

/** Most digits accepted for a timestamp in seconds (11 digits reach the year 5138). */
const MAX_SECONDS_DIGITS = 11;
/** Most digits accepted for a timestamp in milliseconds. */
const MAX_MILLISECONDS_DIGITS = 14;

/**
 * Checks that a signed timestamp lies within `toleranceMs` of `nowMs`, in both directions.
 * The boundary is inclusive: exactly `toleranceMs` old (or ahead) is accepted. Pass
 * `Infinity` to disable the window.
 *
 * @throws HookinboxError HOOKINBOX_TIMESTAMP_TOO_OLD or HOOKINBOX_TIMESTAMP_IN_FUTURE.
 * @example
 * ```ts
 * checkTimestamp(signedAtMs, Date.now(), 5 * 60_000);
 * ```
 */
export function checkTimestamp(signedAtMs: number, nowMs: number, toleranceMs: number): void {
  if (nowMs - signedAtMs > toleranceMs) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_TOO_OLD", `tolerance is ${toleranceMs} ms`);
  }
  if (signedAtMs - nowMs > toleranceMs) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_IN_FUTURE", `tolerance is ${toleranceMs} ms`);
  }
}

/**
 * Parses a canonical non-negative decimal integer timestamp in seconds or milliseconds and
 * returns milliseconds since the epoch. Only ASCII digits are accepted, without sign, spaces,
 * fraction or leading zeros (so the string that was signed is the number's only spelling),
 * and at most 11 digits for seconds or 14 for milliseconds.
 *
 * @throws HookinboxError HOOKINBOX_TIMESTAMP_MALFORMED.
 * @example
 * ```ts
 * parseTimestamp("1700000000", "s");     // 1_700_000_000_000
 * parseTimestamp("1700000000000", "ms"); // 1_700_000_000_000
 * parseTimestamp("17e8", "s");           // throws HOOKINBOX_TIMESTAMP_MALFORMED
 * ```
 */
export function parseTimestamp(value: string, unit: "s" | "ms"): number {
  const maxDigits = unit === "s" ? MAX_SECONDS_DIGITS : MAX_MILLISECONDS_DIGITS;
  const length = value.length;
  if (length === 0 || length > maxDigits || (length > 1 && value.charCodeAt(0) === 48)) {
    throw malformed(unit);
  }
  let n = 0;
  for (let i = 0; i < length; i++) {
    const digit = value.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) throw malformed(unit);
    n = n * 10 + digit;
  }
  return unit === "s" ? n * 1000 : n;
}

/**
 * Parses an integer-seconds timestamp (see {@link parseTimestamp}) and returns milliseconds.
 *
 * @throws HookinboxError HOOKINBOX_TIMESTAMP_MALFORMED.
 * @example
 * ```ts
 * parseTimestampSeconds("1614265330"); // 1_614_265_330_000
 * ```
 */
export function parseTimestampSeconds(value: string): number {
  return parseTimestamp(value, "s");
}

/**
 * Validates a tolerance option at scheme creation (a config mistake, so it throws a plain Error).
 *
 * @example
 * ```ts
 * checkTolerance(300_000); // 300000
 * ```
 */
export function checkTolerance(toleranceMs: number): number {
  if (typeof toleranceMs !== "number" || Number.isNaN(toleranceMs) || toleranceMs < 0) {
    throw new Error("toleranceMs must be a non-negative number of milliseconds (or Infinity)");
  }
  return toleranceMs;
}

function malformed(unit: "s" | "ms") {
  return hookinboxError(
    "HOOKINBOX_TIMESTAMP_MALFORMED",
    unit === "s" ? "expected integer seconds" : "expected integer milliseconds",
  );
}
