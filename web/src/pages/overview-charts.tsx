import { colorAt, TimeChart } from "../chart.tsx";
import type { Samples } from "../samples.ts";
import type { Overview } from "../types.ts";

const sampledCaption =
  "Sampled at each refresh since this page opened (up to the last 60 minutes).";

/**
 * Rejected requests per minute, one line per reason (error code), over the overview's window.
 *
 * @example
 * ```tsx
 * <RejectedByReasonChart series={overview.series} />
 * ```
 */
export function RejectedByReasonChart(props: { series: Overview["series"] }) {
  const { minute, rejectedByReason } = props.series;
  return (
    <TimeChart
      id="chart-rejected-by-reason"
      title="Rejected per minute, by reason"
      caption={rejectedByReason.length === 0 ? "No rejections in this window." : undefined}
      minutes={minute}
      lines={rejectedByReason.map((r, i) => ({
        label: r.code,
        values: r.counts,
        color: colorAt(i),
      }))}
    />
  );
}

/**
 * The oldest unprocessed delivery's age (seconds), as sampled since the page opened.
 *
 * @example
 * ```tsx
 * <OldestAgeChart samples={useSamples(overview)} />
 * ```
 */
export function OldestAgeChart(props: { samples: Samples }) {
  return (
    <TimeChart
      id="chart-oldest-age"
      title="Oldest unprocessed delivery (age, s)"
      caption={sampledCaption}
      minutes={props.samples.at}
      lines={[{ label: "oldest age (s)", values: props.samples.oldestAge, color: "#7c3aed" }]}
    />
  );
}

/**
 * Failing or dead deliveries per source and target, one line each, as sampled since the page
 * opened.
 *
 * @example
 * ```tsx
 * <TargetsChart samples={samples} kind="dead" />
 * ```
 */
export function TargetsChart(props: { samples: Samples; kind: "failing" | "dead" }) {
  const { kind, samples } = props;
  const targets = [...samples.targets.values()];
  return (
    <TimeChart
      id={`chart-${kind}`}
      title={kind === "dead" ? "Dead deliveries per target" : "Failing deliveries per target"}
      caption={targets.length === 0 ? `${sampledCaption} None yet.` : sampledCaption}
      minutes={samples.at}
      lines={targets.map((t, i) => ({ label: t.label, values: t[kind], color: colorAt(i) }))}
    />
  );
}
