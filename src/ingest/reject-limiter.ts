/** Counts rejected requests per remote address in fixed windows. */
export interface RejectLimiter {
  /** Whether the address is over its limit right now (checked before any work). */
  blocked(address: string | null, now: number): boolean;
  /** Counts one rejection for the address. */
  record(address: string | null, now: number): void;
}

/**
 * A limiter of rejected requests per remote address: after `max` rejections in a window the
 * address gets 429 without verification, logging only, and no receipt row (so a flood of forged
 * requests cannot turn into a flood of writes). Memory is bounded: at most `maxAddresses` are
 * tracked; past that, expired windows are dropped first, then the oldest.
 *
 * @example
 * ```ts
 * const limiter = createRejectLimiter({ max: 30, windowMs: 60_000 });
 * if (limiter.blocked(ip, Date.now())) return tooManyRequests();
 * ```
 */
export function createRejectLimiter(options: {
  max: number;
  windowMs: number;
  maxAddresses?: number;
}): RejectLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  const maxAddresses = options.maxAddresses ?? 10_000;
  const current = (address: string, now: number) => {
    const entry = windows.get(address);
    return entry && now - entry.start < options.windowMs ? entry : undefined;
  };
  return {
    blocked(address, now) {
      if (address === null) return false;
      return (current(address, now)?.count ?? 0) >= options.max;
    },
    record(address, now) {
      if (address === null) return;
      const entry = current(address, now);
      if (entry) {
        entry.count++;
        return;
      }
      if (windows.size >= maxAddresses) {
        for (const [key, value] of windows)
          if (now - value.start >= options.windowMs) windows.delete(key);
        if (windows.size >= maxAddresses) windows.delete(windows.keys().next().value as string);
      }
      windows.delete(address);
      windows.set(address, { start: now, count: 1 });
    },
  };
}
