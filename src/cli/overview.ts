import type { Command } from "commander";
import { dashboardOverview, type Overview } from "../operations/dashboard.ts";
import type { CommandHost } from "./command-host.ts";
import { renderTable } from "./table.ts";

const percent = (ratio: number) => `${(ratio * 100).toFixed(1)}%`;
const seconds = (value: number) => `${Math.round(value)}s`;

/** The dashboard's overview as text: totals, per source, rejections by code, queues per target. */
function overviewText(overview: Overview): string {
  const { totals } = overview;
  const lines = [
    `last ${overview.minutes} minutes (to ${overview.now}): received ${totals.received}, duplicates ${totals.duplicates} (${percent(totals.duplicateRate)}), rejected ${totals.rejected}`,
    `oldest unprocessed: ${seconds(overview.oldestUnprocessedAgeSeconds)}; effects held: ${overview.heldEffects}`,
  ];
  if (overview.sources.length > 0)
    lines.push(
      "sources:",
      renderTable(
        ["SOURCE", "RECEIVED", "DUPLICATES", "REJECTED"],
        overview.sources.map((s) => [
          s.source,
          String(s.received),
          String(s.duplicates),
          String(s.rejected),
        ]),
      ),
    );
  if (overview.rejectedByReason.length > 0)
    lines.push(
      "rejected by reason:",
      renderTable(
        ["CODE", "COUNT"],
        overview.rejectedByReason.map((r) => [r.code, String(r.count)]),
      ),
    );
  if (overview.targets.length > 0)
    lines.push(
      "deliveries by target:",
      renderTable(
        ["SOURCE", "TARGET", "PENDING", "BLOCKED", "RUNNING", "FAILING", "DEAD", "OLDEST"],
        overview.targets.map((t) => [
          t.source,
          t.target,
          String(t.pending),
          String(t.blocked),
          String(t.running),
          String(t.failing),
          String(t.dead),
          seconds(t.oldestAgeSeconds),
        ]),
      ),
    );
  return lines.join("\n");
}

/**
 * `hookinbox overview [--minutes 60] [--json]`: the dashboard's overview figures (the same
 * operation as `GET /api/dashboard/overview`), read without migrating.
 *
 * @example
 * ```ts
 * registerOverview(program, host); // hookinbox overview --minutes 15
 * ```
 */
export function registerOverview(program: Command, host: CommandHost): void {
  host
    .leaf(program, "overview", dashboardOverview.summary)
    .option("--minutes <n>", "the window, 5 to 1440 minutes (default 60)")
    .action((options) =>
      host.run(
        options,
        { operation: dashboardOverview, access: "read", text: overviewText },
        { minutes: options.minutes },
      ),
    );
}
