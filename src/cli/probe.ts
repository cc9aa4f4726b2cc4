import { parseArgs } from "node:util";
import { hookinboxError } from "../errors.ts";
import { type ProbeOptions, type ProbeReport, runProbe } from "../testing/probe/run-probe.ts";
import type { CliContext } from "./context.ts";
import { printable } from "./printable.ts";
import { requireSample, signingSecret } from "./send-sample.ts";
import { renderTable } from "./table.ts";
import { jsonForTerminal } from "./terminal.ts";

function msOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 600_000) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      `--${name} takes milliseconds from 1 to 600000 (got "${value}")`,
    );
  }
  return n;
}

function renderReport(report: ProbeReport): string {
  const rows = report.checks.map((c) => [
    String(c.id),
    c.title,
    c.outcome.toUpperCase(),
    printable(c.detail, 160),
  ]);
  const failed = report.checks.filter((c) => c.outcome === "fail").length;
  const skipped = report.checks.filter((c) => c.outcome === "skip").length;
  const verdict =
    failed === 0 ? "all checks passed" : `${failed} check${failed === 1 ? "" : "s"} failed`;
  return `${renderTable(["#", "CHECK", "RESULT", "DETAIL"], rows)}\n\n${verdict}${skipped ? ` (${skipped} skipped)` : ""}\n`;
}

/**
 * `hookinbox probe URL --provider P --secret S [--effects URL|CMD] [--budget MS] [--json]`: runs
 * the battery of checks a provider's behaviour amounts to (duplicates in a row and in parallel,
 * an altered body, a stale timestamp, re-spaced JSON, an unhandled type, out-of-order events,
 * answer time) against any receiver; prints a table (or JSON) and exits 1 when a check fails.
 *
 * @example
 * ```ts
 * await probeCommand(ctx, ["http://127.0.0.1:3000/webhooks/stripe", "--provider", "stripe", "--secret", "whsec_…"]);
 * ```
 */
export async function probeCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      provider: { type: "string" },
      secret: { type: "string" },
      effects: { type: "string" },
      budget: { type: "string" },
      parallel: { type: "string" },
      timeout: { type: "string" },
      quiet: { type: "string" },
      settle: { type: "string" },
      json: { type: "boolean" },
    },
  });
  const url = positionals[0];
  if (url === undefined || !/^https?:\/\//i.test(url)) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "`hookinbox probe URL --provider P --secret S` needs the receiver's full http(s) URL",
    );
  }
  if (values.provider === undefined) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "`hookinbox probe` needs --provider (the provider whose behaviour to play)",
    );
  }
  const sample = requireSample(values.provider);
  const secret = signingSecret(ctx, values.secret);
  const parallel = msOption("parallel", values.parallel);
  if (parallel !== undefined && parallel > 1_000)
    throw hookinboxError("HOOKINBOX_USAGE", "--parallel takes 1 to 1000");
  const json = values.json === true;
  const budgetMs = msOption("budget", values.budget);
  const timeoutMs = msOption("timeout", values.timeout);
  const quietMs = msOption("quiet", values.quiet);
  const settleMs = msOption("settle", values.settle);
  const options: ProbeOptions = {
    url,
    sample,
    secret,
    cwd: ctx.cwd,
    env: ctx.env,
    ...(values.effects === undefined ? {} : { effects: values.effects }),
    ...(budgetMs === undefined ? {} : { budgetMs }),
    ...(parallel === undefined ? {} : { parallel }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(quietMs === undefined ? {} : { quietMs }),
    ...(settleMs === undefined ? {} : { settleMs }),
    onCheck: (c) => ctx.stderr.write(`  ${c.id}. ${c.key}: ${c.outcome}\n`),
  };
  if (!json) ctx.stderr.write(`probing ${url} as ${sample.provider}…\n`);
  const report = await runProbe(options);
  ctx.stdout.write(json ? `${jsonForTerminal(report)}\n` : `\n${renderReport(report)}`);
  return report.ok ? 0 : 1;
}
