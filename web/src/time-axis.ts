import uPlot from "uplot";

/**
 * Fewer points than this draw no line: a chart says "not enough samples yet" instead. (With one
 * point uPlot widens a time axis by 86,400 of its units, which are seconds here: 1,000 days.)
 */
export const minChartPoints = 2;

/**
 * The x range (uPlot's seconds) of a chart: exactly the first and the last of its ascending
 * times, never a range uPlot pads or guesses.
 *
 * @example
 * ```ts
 * timeRange([1_796_000_000, 1_796_000_300]); // [1796000000, 1796000300]
 * ```
 */
export function timeRange(seconds: ArrayLike<number>): [number, number] {
  const first = seconds[0] ?? 0;
  const last = seconds[seconds.length - 1] ?? first;
  return [first, last];
}

/**
 * The tick label format for an axis spanning `spanSeconds`: seconds when the span is under ten
 * minutes (samples come every few seconds), hours and minutes up to a day, the day beyond.
 *
 * @example
 * ```ts
 * tickFormat(300)(new Date(2026, 11, 3, 20, 15, 5)); // "20:15:05"
 * ```
 */
export function tickFormat(spanSeconds: number): (date: Date) => string {
  if (spanSeconds < 600) return uPlot.fmtDate("{HH}:{mm}:{ss}");
  if (spanSeconds <= 86_400) return uPlot.fmtDate("{HH}:{mm}");
  return uPlot.fmtDate("{MMM} {D} {HH}:{mm}");
}
