import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

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
 * changes; `caption` says what the points are when that is not obvious.
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
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data = [props.minutes.map((ms) => ms / 1000), ...props.lines.map((l) => l.values)];
  const shape = props.lines.map((l) => l.label).join("|");

  useEffect(() => {
    if (!box.current) return;
    const width = Math.max(300, box.current.clientWidth || 600);
    plot.current = new uPlot(
      {
        width,
        height: 180,
        legend: { show: true },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        series: [{}, ...props.lines.map((l) => ({ label: l.label, stroke: l.color, width: 2 }))],
        axes: [{}, { size: 40 }],
      },
      data as uPlot.AlignedData,
      box.current,
    );
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
    // Rebuilt only when the lines change; data updates go through setData below.
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(data as uPlot.AlignedData);
  });

  return (
    <section class="card chart" data-testid={props.id} data-points={props.minutes.length}>
      <h3>{props.title}</h3>
      {props.caption && <p class="muted small caption">{props.caption}</p>}
      <div ref={box} />
    </section>
  );
}
