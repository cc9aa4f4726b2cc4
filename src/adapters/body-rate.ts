import type { MinBodyRate } from "../config/resolve-min-body-rate.ts";

/** Counts a body's bytes as they arrive; `stop` when the body ends or fails. */
export interface BodyRateWatch {
  received(bytes: number): void;
  stop(): void;
}

/**
 * Watches a body's arrival rate: once `graceMs` has passed, every tick (1 s, or the window if
 * shorter) the bytes received over the last `windowMs` must reach `bytesPerSecond` for that
 * window, else `onTooSlow` is called once, with a message naming the figures. The window slides
 * tick by tick, so a sender cannot pass with one burst followed by a trickle.
 *
 * @example
 * ```ts
 * const watch = watchBodyRate({ bytesPerSecond: 240, graceMs: 5000, windowMs: 5000 }, (m) => fail(m));
 * req.on("data", (chunk) => watch.received(chunk.length));
 * req.on("end", () => watch.stop());
 * ```
 */
export function watchBodyRate(
  rate: MinBodyRate,
  onTooSlow: (message: string) => void,
): BodyRateWatch {
  const tickMs = Math.max(50, Math.min(1_000, rate.windowMs));
  const ticksPerWindow = Math.max(1, Math.round(rate.windowMs / tickMs));
  const windowMs = ticksPerWindow * tickMs;
  const needed = (rate.bytesPerSecond * windowMs) / 1000;
  // Total bytes at each of the last ticksPerWindow + 1 ticks; the first is a window ago.
  const totals: number[] = [0];
  let total = 0;
  let elapsed = 0;
  const timer = setInterval(() => {
    elapsed += tickMs;
    totals.push(total);
    if (totals.length > ticksPerWindow + 1) totals.shift();
    if (elapsed < rate.graceMs || elapsed < windowMs) return;
    const inWindow = total - totals[0]!;
    if (inWindow < needed) {
      clearInterval(timer);
      onTooSlow(
        `${inWindow} bytes in the last ${windowMs} ms, under ${rate.bytesPerSecond} bytes/s (http.minBodyRate)`,
      );
    }
  }, tickMs);
  timer.unref();
  return {
    received(bytes) {
      total += bytes;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
