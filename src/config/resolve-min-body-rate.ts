import { parseDuration } from "./units.ts";

/** The slowest a request body may arrive (`http.minBodyRate` after defaults). */
export interface MinBodyRate {
  /** Bytes per second the body must keep up, measured over each `windowMs`. */
  readonly bytesPerSecond: number;
  /** No rate is asked before this much time has passed since the headers arrived. */
  readonly graceMs: number;
  /** The sliding window the rate is measured over. */
  readonly windowMs: number;
}

/** Below this a mobile link still delivers; a provider's datacenter sends far faster. */
export const defaultMinBodyRate: MinBodyRate = {
  bytesPerSecond: 240,
  graceMs: 5_000,
  windowMs: 5_000,
};

/**
 * Resolves `http.minBodyRate`: false turns it off (null), an object overrides the defaults
 * field by field.
 *
 * @example
 * ```ts
 * resolveMinBodyRate({ bytesPerSecond: 1000 }); // { bytesPerSecond: 1000, graceMs: 5000, windowMs: 5000 }
 * resolveMinBodyRate(false); // null
 * ```
 */
export function resolveMinBodyRate(
  value:
    | false
    | { bytesPerSecond?: number; grace?: string | number; window?: string | number }
    | undefined,
): MinBodyRate | null {
  if (value === false) return null;
  return {
    bytesPerSecond: value?.bytesPerSecond ?? defaultMinBodyRate.bytesPerSecond,
    graceMs:
      parseDuration(value?.grace ?? defaultMinBodyRate.graceMs) ?? defaultMinBodyRate.graceMs,
    windowMs:
      parseDuration(value?.window ?? defaultMinBodyRate.windowMs) ?? defaultMinBodyRate.windowMs,
  };
}
