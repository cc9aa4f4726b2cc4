import { isIP } from "node:net";
import { normaliseAddress } from "./ip-allow.ts";

/** Counts rejected requests per remote address in fixed windows. */
export interface RejectLimiter {
  /** Whether the address is over its limit right now (checked before any work). */
  blocked(address: string | null, now: number): boolean;
  /** Counts one rejection for the address. */
  record(address: string | null, now: number): void;
  /** Milliseconds until the address's current window ends (0 when it has none). */
  retryAfterMs(address: string | null, now: number): number;
}

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 tail becomes two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.split("%")[0]!;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", rest] = text.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = rest === undefined || rest === "" ? [] : rest.split(":");
  const zeros = rest === undefined ? [] : new Array(8 - left.length - right.length).fill("0");
  return [...left, ...zeros, ...right].map((group) => Number.parseInt(group, 16));
}

/**
 * The key an address is limited under: an IPv4 address as it is (IPv4-mapped IPv6 too), an IPv6
 * address by its /64, since one host usually holds a whole /64 and could rotate through it.
 *
 * @example
 * ```ts
 * rejectLimitKey("2001:db8:1:2::9"); // "2001:db8:1:2::/64"
 * rejectLimitKey("::ffff:203.0.113.9"); // "203.0.113.9"
 * ```
 */
export function rejectLimitKey(address: string): string {
  const plain = normaliseAddress(address);
  if (isIP(plain) !== 6) return plain;
  const groups = ipv6Groups(plain.toLowerCase());
  // IPv4-mapped, written in hex (::ffff:c633:6407): the IPv4 address it maps.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(":")}::/64`;
}

/**
 * A limiter of rejected requests per remote address (per /64 for IPv6, see `rejectLimitKey`): after `max` rejections in a window the
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
    blocked(peer, now) {
      if (peer === null) return false;
      return (current(rejectLimitKey(peer), now)?.count ?? 0) >= options.max;
    },
    retryAfterMs(peer, now) {
      if (peer === null) return 0;
      const entry = current(rejectLimitKey(peer), now);
      return entry ? entry.start + options.windowMs - now : 0;
    },
    record(peer, now) {
      if (peer === null) return;
      const address = rejectLimitKey(peer);
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
