import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { minChartPoints, tickFormat, timeRange } from "./time-axis.ts";

/** One line of a chart. */
export interface Line {
  label: string;
  values: number[];
  color: string;
}

const palette = ["#dc2626", "#2563eb", "#d97706", "#059669", "#7c3aed", "#db2777", "#0891b2"];

/**
 * The `i`th color of a small palette (it repeats), for charts with one line per name.
 *
 * @example
 * ```ts
 * reasons.map((r, i) => ({ label: r.code, values: r.counts, color: colorAt(i) }));
 * ```
 */
export function colorAt(i: number): string {
  return palette[i % palette.length]!;
}

/**
 * A uPlot time-series chart (x: times in ms, such as minute starts), updated in place when data
 * changes; `caption` says what the points are when that is not obvious. The x axis spans exactly
 * the data's first to last time; with fewer than {@link minChartPoints} points it draws nothing
 * and says "Not enough samples yet". The drawn range and tick labels are on the section as
 * `data-x-min`/`data-x-max` (ms) and `data-ticks` (JSON `[{ at, label }]`, `at` in ms).
 *
 * @example
 * ```tsx
 * <TimeChart id="chart-rejected" title="Rejected per minute" minutes={series.minute}
 *   lines={[{ label: "rejected", values: series.rejected, color: "#dc2626" }]} />
 * ```
 */
export function TimeChart(props: {
  title: string;
  minutes: number[];
  lines: Line[];
  id: string;
  caption?: string;
}) {
  const section = useRef<HTMLElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const ticks = useRef<Array<{ at: number; label: string }>>([]);
  const data = [props.minutes.map((ms) => ms / 1000), ...props.lines.map((l) => l.values)];
  const shape = props.lines.map((l) => l.label).join("|");
  const enough = props.minutes.length >= minChartPoints;

  useEffect(() => {
    if (!enough || !box.current) return;
    const width = Math.max(300, box.current.clientWidth || 600);
    plot.current = new uPlot(
      {
        width,
        height: 180,
        legend: { show: true },
        scales: {
          x: { time: true, range: (u) => timeRange(u.data[0]) },
          y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
        },
        series: [{}, ...props.lines.map((l) => ({ label: l.label, stroke: l.color, width: 2 }))],
        axes: [
          {
            values: (u, splits) => {
              const [min, max] = timeRange(u.data[0]);
              const format = tickFormat(max - min);
              ticks.current = splits.map((s) => ({
                at: s * 1000,
                label: format(new Date(s * 1000)),
              }));
              return ticks.current.map((t) => t.label);
            },
          },
          { size: 40 },
        ],
        hooks: {
          draw: [
            (u) => {
              const el = section.current;
              if (!el) return;
              el.dataset.xMin = String(Math.round((u.scales.x?.min ?? 0) * 1000));
              el.dataset.xMax = String(Math.round((u.scales.x?.max ?? 0) * 1000));
              el.dataset.ticks = JSON.stringify(ticks.current);
            },
          ],
        },
      },
      data as uPlot.AlignedData,
      box.current,
    );
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
    // Rebuilt only when the lines change or the chart starts drawing; data updates go through
    // setData below.
  }, [shape, enough]);

  useEffect(() => {
    plot.current?.setData(data as uPlot.AlignedData);
  });

  return (
    <section
      class="card chart"
      ref={section}
      data-testid={props.id}
      data-points={props.minutes.length}
    >
      <h3>{props.title}</h3>
      {props.caption && <p class="muted small caption">{props.caption}</p>}
      {enough ? (
        <div ref={box} />
      ) : (
        <p class="muted not-enough" data-testid={`${props.id}-not-enough`}>
          Not enough samples yet: {props.minutes.length} of the {minChartPoints} a line needs.
        </p>
      )}
    </section>
  );
}
