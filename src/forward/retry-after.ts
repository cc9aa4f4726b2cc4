/**
 * Parses `Retry-After` into a delay in ms from `nowMs`: delay-seconds (`"2"`) or an HTTP date
 * (`"Wed, 21 Oct 2026 07:28:00 GMT"`). Null when absent or unreadable; a date in the past is 0.
 * Capped at `maxMs` (default 1 day) so a wild value cannot park a delivery for ever.
 *
 * @example
 * ```ts
 * retryAfterMs("2", Date.now()); // 2000
 * ```
 */
export function retryAfterMs(
  value: string | undefined,
  nowMs: number,
  maxMs = 86_400_000,
): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, maxMs);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.min(Math.max(0, date - nowMs), maxMs);
}
