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

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Parses an RFC 3339 date-time (`2019-11-16T10:11:12.634234626Z`; fractions beyond ms are
 * truncated) into ms since the epoch. Calendar fields are range-checked; leap seconds rejected.
 *
 * @throws HookinboxError HOOKINBOX_TIMESTAMP_MALFORMED.
 * @example
 * ```ts
 * parseRfc3339("2023-11-14T22:13:20.123456789Z"); // 1_700_000_000_123
 * ```
 */
export function parseRfc3339(value: string): number {
  const match = RFC3339.exec(value);
  if (match === null) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MALFORMED", "expected an RFC 3339 date-time");
  }
  const [, y, mo, d, h, mi, s, fraction = "", zone = "Z"] = match;
  const month = Number(mo);
  const day = Number(d);
  const zoneOk =
    zone.length === 1 || (Number(zone.slice(1, 3)) <= 23 && Number(zone.slice(4, 6)) <= 59);
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > 31 ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59 ||
    !zoneOk
  ) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MALFORMED", "date-time field out of range");
  }
  const ms = fraction.padEnd(3, "0").slice(0, 3);
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}${zone.toUpperCase()}`;
  const parsed = Date.parse(iso);
  // Date.parse rolls Feb 30 over to March; compare the day back to catch it.
  if (Number.isNaN(parsed) || new Date(parsed + offsetMs(zone)).getUTCDate() !== day) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MALFORMED", "not a calendar date-time");
  }
  return parsed;
}

function offsetMs(zone: string): number {
  if (zone === "Z" || zone === "z") return 0;
  const sign = zone.startsWith("-") ? -1 : 1;
  return sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
}
