import { api } from "../api.ts";
import { TimeChart } from "../chart.tsx";
import { age } from "../format.ts";
import { useSamples } from "../samples.ts";
import type { Overview } from "../types.ts";
import { useLoad } from "../use-load.ts";
import { OldestAgeChart, RejectedByReasonChart, TargetsChart } from "./overview-charts.tsx";

function Tile(props: { label: string; value: string | number; id: string; warn?: boolean }) {
  return (
    <div class={`tile${props.warn ? " warn" : ""}`}>
      <div class="label">{props.label}</div>
      <div class="value" data-testid={props.id}>
        {props.value}
      </div>
    </div>
  );
}

/**
 * Live (polled every 5 s) figures of the last hour, per minute, source and target; the gauges
 * the store keeps no history of (oldest unprocessed age, failing and dead per target) are
 * charted from the samples taken since the page opened.
 *
 * @example
 * ```tsx
 * <OverviewPage />
 * ```
 */
export function OverviewPage() {
  const { data, error } = useLoad(() => api<Overview>("dashboard/overview?minutes=60"), [], 5000);
  const samples = useSamples(data);
  if (error) return <p class="error">{error}</p>;
  if (!data) return <p class="muted">Loading…</p>;
  const { series, totals } = data;
  const dead = data.targets.reduce((n, t) => n + t.dead, 0);
  const failing = data.targets.reduce((n, t) => n + t.failing, 0);
  const rate = series.received.map((r, i) => (r === 0 ? 0 : (100 * series.duplicates[i]!) / r));
  return (
    <div>
      <h2>Overview · last {data.minutes} minutes</h2>
      <div class="tiles">
        <Tile label="Received" value={totals.received} id="total-received" />
        <Tile label="Duplicates discarded" value={totals.duplicates} id="total-duplicates" />
        <Tile
          label="Duplicate rate"
          value={`${(100 * totals.duplicateRate).toFixed(1)}%`}
          id="duplicate-rate"
        />
        <Tile
          label="Rejected"
          value={totals.rejected}
          id="total-rejected"
          warn={totals.rejected > 0}
        />
        <Tile
          label="Oldest unprocessed"
          value={age(data.oldestUnprocessedAgeSeconds)}
          id="oldest-age"
        />
        <Tile label="Failing" value={failing} id="total-failing" warn={failing > 0} />
        <Tile label="Dead" value={dead} id="total-dead" warn={dead > 0} />
        <Tile
          label="Held effects"
          value={data.heldEffects}
          id="held-effects"
          warn={data.heldEffects > 0}
        />
      </div>
      <div class="charts">
        <TimeChart
          id="chart-received"
          title="Received per minute"
          minutes={series.minute}
          lines={[
            { label: "received", values: series.received, color: "#2563eb" },
            { label: "duplicates", values: series.duplicates, color: "#d97706" },
          ]}
        />
        <TimeChart
          id="chart-duplicate-rate"
          title="Duplicate discard rate (%)"
          minutes={series.minute}
          lines={[{ label: "duplicates %", values: rate, color: "#d97706" }]}
        />
        <TimeChart
          id="chart-rejected"
          title="Rejected per minute"
          minutes={series.minute}
          lines={[{ label: "rejected", values: series.rejected, color: "#dc2626" }]}
        />
        <RejectedByReasonChart series={series} />
        <OldestAgeChart samples={samples} />
        <TargetsChart samples={samples} kind="failing" />
        <TargetsChart samples={samples} kind="dead" />
      </div>
      <div class="columns">
        <section class="card">
          <h3>Per source</h3>
          <table data-testid="sources-table">
            <thead>
              <tr>
                <th>Source</th>
                <th>Received</th>
                <th>Duplicates</th>
                <th>Rejected</th>
              </tr>
            </thead>
            <tbody>
              {data.sources.map((s) => (
                <tr>
                  <td>{s.source}</td>
                  <td class="num">{s.received}</td>
                  <td class="num">{s.duplicates}</td>
                  <td class="num">{s.rejected}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
        <section class="card">
          <h3>Rejected by reason</h3>
          <table data-testid="reasons-table">
            <tbody>
              {data.rejectedByReason.length === 0 && (
                <tr>
                  <td class="muted">None</td>
                </tr>
              )}
              {data.rejectedByReason.map((r) => (
                <tr>
                  <td>
                    <code>{r.code}</code>
                  </td>
                  <td class="num">{r.count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      </div>
      <section class="card">
        <h3>Deliveries per source and target</h3>
        <table data-testid="targets-table">
          <thead>
            <tr>
              <th>Source</th>
              <th>Target</th>
              <th>Pending</th>
              <th>Running</th>
              <th>Blocked</th>
              <th>Failing</th>
              <th>Dead</th>
              <th>Oldest unprocessed</th>
            </tr>
          </thead>
          <tbody>
            {data.targets.length === 0 && (
              <tr>
                <td colSpan={8} class="muted">
                  Nothing waiting
                </td>
              </tr>
            )}
            {data.targets.map((t) => (
              <tr>
                <td>{t.source}</td>
                <td>{t.target}</td>
                <td class="num">{t.pending}</td>
                <td class="num">{t.running}</td>
                <td class="num">{t.blocked}</td>
                <td class={`num${t.failing ? " bad" : ""}`}>{t.failing}</td>
                <td class={`num${t.dead ? " bad" : ""}`}>{t.dead}</td>
                <td class="num">{age(t.oldestAgeSeconds)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </div>
  );
}
