import { parseDuration } from "../config/units.ts";
import { hookinboxError } from "../errors.ts";

/**
 * Parses `--limit` (1..500) for list commands; undefined when absent.
 *
 * @example
 * ```ts
 * parseLimitOption("20"); // 20
 * ```
 */
export function parseLimitOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || limit > 500) {
    throw hookinboxError("HOOKINBOX_USAGE", "--limit takes an integer from 1 to 500");
  }
  return limit;
}

/**
 * Parses a duration option such as `--older-than 1h` into milliseconds.
 *
 * @example
 * ```ts
 * parseDurationOption("--older-than", "15m"); // 900000
 * ```
 */
export function parseDurationOption(name: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      `${name} takes a duration like "30s", "15m", "1h" or "2d" (got "${value}")`,
    );
  }
  return ms;
}

/**
 * Shortens text to one line of at most `max` characters, ending in `…` when cut.
 *
 * @example
 * ```ts
 * oneLine("Error: boom\n    at x", 12); // "Error: boom…"
 * ```
 */
export function oneLine(text: string | null, max: number): string {
  if (text === null || text === "") return "-";
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
