const durationUnits: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const sizeUnits: Record<string, number> = {
  b: 1,
  kb: 1024,
  mb: 1024 * 1024,
  gb: 1024 * 1024 * 1024,
};

/** A duration: milliseconds, or a string like `"500ms"`, `"30s"`, `"15m"`, `"2h"`, `"30d"`. */
export type Duration = number | `${number}${"ms" | "s" | "m" | "h" | "d"}`;

/** A size: bytes, or a string like `"512kb"`, `"1mb"`. */
export type Size = number | `${number}${"b" | "kb" | "mb" | "gb"}`;

/**
 * Parses a duration into milliseconds; undefined when the text is not a duration.
 *
 * @example
 * ```ts
 * parseDuration("5m"); // 300000
 * ```
 */
export function parseDuration(value: number | string): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/i.exec(value);
  if (!match) return undefined;
  return Math.round(Number(match[1]) * (durationUnits[match[2]!.toLowerCase()] ?? Number.NaN));
}

/**
 * Parses a size into bytes; undefined when the text is not a size.
 *
 * @example
 * ```ts
 * parseSize("1mb"); // 1048576
 * ```
 */
export function parseSize(value: number | string): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) && value > 0 ? value : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)\s*$/i.exec(value);
  if (!match) return undefined;
  return Math.round(Number(match[1]) * (sizeUnits[match[2]!.toLowerCase()] ?? Number.NaN));
}
