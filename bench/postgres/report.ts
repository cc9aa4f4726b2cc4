// Tables for bench/postgres.ts and its generated block in docs/BENCHMARKS.md.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LoadResult } from "../ingest/clients.ts";
import { repoRoot } from "../ingest/servers.ts";
import type { StoreCheck } from "../ingest/verify-store.ts";
import type { LatencyResult } from "./latency.ts";

/** CPU over a window, % of one core (the machine has nproc × 100). */
export interface CpuSplit {
  readonly mainPct: number; // the server or worker process under test
  readonly pgPct: number; // PostgreSQL backends of this scenario's database + server processes
  readonly clientPct: number; // load generator (ingest only)
  readonly othersPct: number; // other people's processes and their PostgreSQL backends
  readonly restPct: number; // unattributed: kernel (loopback, I/O), this bench's orchestrator
  readonly seconds: number; // the window's length
}

/** CPU time per event, µs, of a share `pct` (% of a core) used over `cpu.seconds`. */
export const usPer = (pct: number, cpu: CpuSplit, events: number) =>
  (pct * 10_000 * cpu.seconds) / Math.max(events, 1);

export interface IngestResult {
  readonly name: string;
  readonly kind: "bare" | "stub" | "hookinbox";
  readonly background: number;
  readonly warm: LoadResult;
  readonly sat: LoadResult;
  readonly satCpu: CpuSplit;
  readonly fixed: LoadResult;
  readonly rss: { startMb: number; afterWarmupMb: number; endMb: number; peakMb: number };
  readonly store: StoreCheck | null;
}

export interface BurnResult {
  readonly label: string;
  readonly system: "hookinbox" | "graphile-worker";
  readonly mode: string; // hookinbox | default | fast
  readonly keys: number;
  readonly distinctKeys: number;
  readonly background: number;
  readonly preloadMs: number;
  readonly startupMs: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly cpu: CpuSplit;
  readonly rss: { startMb: number; endMb: number; peakMb: number };
  readonly pass: boolean;
  readonly check: string;
}

export interface LatencyRow extends LatencyResult {
  readonly background: number;
}

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const f = (n: number, d = 2) => n.toFixed(d);
const ms = (r: LoadResult) => `${f(r.p50Ms)} / ${f(r.p99Ms)}`;
const cpuCell = (c: CpuSplit, client: boolean) =>
  [c.mainPct, c.pgPct, ...(client ? [c.clientPct] : []), c.othersPct, c.restPct]
    .map((p) => f(p, 0))
    .join(" / ");

/** A markdown table padded as `biome format` pads it (widths in code points; no emoji). */
export function markdownTable(header: string[], rows: string[][]): string[] {
  const width = (text: string) => [...text].length;
  const widths = header.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ""))));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c + " ".repeat(widths[i]! - width(c))).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}

export const INGEST_GOAL = 0.35; // of bare: the issue's stretch goal
export const STUB_GOAL = 0.9; // of the PostgreSQL durable stub

export function ingestTable(results: readonly IngestResult[], rate: number): string[] {
  const bare = results.find((r) => r.kind === "bare")?.sat.rps ?? Number.NaN;
  const stub = results.find((r) => r.kind === "stub")?.sat.rps ?? Number.NaN;
  const rows = results.map((r) => {
    const loads = [r.warm, r.sat, r.fixed];
    const non2xx = loads.reduce((n, l) => n + l.non2xx, 0);
    const errors = loads.reduce((n, l) => n + l.socketErrors, 0);
    const short = r.fixed.rps < rate * 0.95 ? ` (only ${int(r.fixed.rps)}/s)` : "";
    const { startMb, afterWarmupMb, endMb, peakMb } = r.rss;
    return [
      r.name,
      int(r.sat.rps),
      `${f((100 * r.sat.rps) / bare, 0)}%`,
      r.kind === "hookinbox" ? `${f(r.sat.rps / stub)}×` : "",
      ms(r.sat),
      `${ms(r.fixed)}${short}`,
      cpuCell(r.satCpu, true),
      r.kind === "bare"
        ? f(usPer(r.satCpu.mainPct, r.satCpu, r.sat.ok), 0)
        : [r.satCpu.mainPct, r.satCpu.pgPct]
            .map((p) => f(usPer(p, r.satCpu, r.sat.ok), 0))
            .join(" / "),
      `${non2xx}${errors ? ` (+${errors} socket errors)` : ""}`,
      `${[startMb, afterWarmupMb, endMb].map((m) => f(m, 0)).join(" → ")} (${f(peakMb, 0)})`,
      r.store
        ? `${r.store.pass ? "OK" : "MISMATCH"}: ${r.store.events} events = ${r.store.ackedEvents} unique 2xx ids + ${r.store.events - r.store.ackedEvents} in flight`
        : "n/a",
      f(r.background, 0),
    ];
  });
  const table = markdownTable(
    [
      "server",
      "req/s at saturation",
      "vs bare",
      "hookinbox ÷ stub",
      "p50 / p99 ms at saturation",
      `p50 / p99 ms at ${int(rate)} req/s`,
      "CPU % at saturation: server / PostgreSQL / client / others / rest",
      "CPU µs per 2xx at saturation: server / PostgreSQL",
      "non-2xx",
      "RSS MB: start → warm → end (peak)",
      "store check",
      "background CPU % before",
    ],
    rows,
  );
  const hook = results.find((r) => r.kind === "hookinbox");
  if (hook) {
    const vsBare = hook.sat.rps / bare;
    const vsStub = hook.sat.rps / stub;
    const verdict = (ratio: number, goal: number, of: number) =>
      ratio >= goal ? "met" : `NOT met (${int(of * goal - hook.sat.rps)} req/s short)`;
    table.push(
      "",
      `Goal (hookinbox on PostgreSQL ≥ ${STUB_GOAL}× the PostgreSQL durable stub): ${f(vsStub)}× → ${verdict(vsStub, STUB_GOAL, stub)}; ` +
        `stretch (≥ ${INGEST_GOAL * 100}% of bare): ${f(100 * vsBare, 1)}% → ${verdict(vsBare, INGEST_GOAL, bare)}.`,
    );
    for (const r of results)
      if (r.store && r.kind !== "bare")
        table.push("", `${r.name} store check: ${r.store.summary}.`);
  }
  return table;
}

/** One scale-out run: `gateways` hookinbox processes on one database, one wrk each. */
export interface ScaleResult {
  readonly gateways: number;
  readonly connections: number; // per wrk
  readonly background: number;
  readonly sat: readonly LoadResult[]; // one per gateway
  readonly cpu: CpuSplit; // mainPct: all gateways together
  readonly store: StoreCheck;
}

export function scaleTable(results: readonly ScaleResult[]): string[] {
  const one = results.find((r) => r.gateways === 1);
  const total = (r: ScaleResult) => r.sat.reduce((n, l) => n + l.rps, 0);
  const accepted = (r: ScaleResult) => r.sat.reduce((n, l) => n + l.ok, 0);
  const wraps = (r: ScaleResult) => r.sat.reduce((n, l) => n + l.wraps, 0);
  const rows = results.map((r) => {
    const c = r.cpu;
    const worst = (key: "p50Ms" | "p99Ms") => Math.max(...r.sat.map((l) => l[key]));
    return [
      String(r.gateways),
      `${r.gateways} × -c${r.connections}`,
      int(total(r)),
      one ? `${f(total(r) / total(one))}×` : "",
      `${f(worst("p50Ms"))} / ${f(worst("p99Ms"))}`,
      cpuCell(c, true),
      `${f((100 * c.pgPct) / (c.pgPct + c.mainPct), 0)}%`,
      f(usPer(c.pgPct, c, accepted(r)), 0),
      f(usPer(c.mainPct, c, accepted(r)), 0),
      String(r.sat.reduce((n, l) => n + l.non2xx, 0)) +
        (wraps(r) ? ` (SLICE RAN OUT ${wraps(r)}×)` : ""),
      `${r.store.pass ? "OK" : "MISMATCH"}: ${r.store.events} events = ${r.store.ackedEvents} unique 2xx ids + ${r.store.events - r.store.ackedEvents} in flight, ${r.store.missing} missing`,
      f(r.background, 0),
    ];
  });
  const table = markdownTable(
    [
      "hookinbox gateways (one database)",
      "wrk -t1 per gateway",
      "req/s at saturation (sum)",
      "÷ 1 gateway",
      "p50 / p99 ms (worst gateway)",
      "CPU %: gateways / PostgreSQL / clients / others / rest",
      "PostgreSQL ÷ (gateways + PostgreSQL) CPU",
      "PostgreSQL CPU µs per 2xx",
      "gateway CPU µs per 2xx",
      "non-2xx",
      "store check (every 2xx id stored)",
      "background CPU % before",
    ],
    rows,
  );
  const pgUs = results.map((r) => usPer(r.cpu.pgPct, r.cpu, accepted(r)));
  if (pgUs.length > 0) {
    const [low, high] = [Math.min(...pgUs), Math.max(...pgUs)];
    table.push(
      "",
      `PostgreSQL CPU per accepted event: ${f(low, 0)}–${f(high, 0)} µs, so one PostgreSQL core sustains about ` +
        `${int(1e6 / high)}–${int(1e6 / low)} accepted events/s (commits, WAL and indexes included; the fsyncs' wait is not CPU).`,
    );
  }
  return table;
}

export function burnTable(burns: readonly BurnResult[]): string[] {
  const graphile = (mode: string, keys: number) =>
    burns.find((b) => b.mode === mode && b.keys === keys);
  const rows = burns.map((b) => {
    const vs =
      b.system === "hookinbox"
        ? ["default", "fast"]
            .map((mode) => graphile(mode, b.keys))
            .map((g) => (g ? `${f(b.perSecond / g.perSecond)}×` : "?"))
            .join(" / ")
        : "";
    return [
      b.label,
      b.keys
        ? `on (${int(b.distinctKeys)} ${b.system === "hookinbox" ? "keys" : "queues"})`
        : "off",
      int(b.perSecond),
      f(b.seconds),
      vs,
      cpuCell(b.cpu, false),
      `${f(b.rss.startMb, 0)} → ${f(b.rss.endMb, 0)} (${f(b.rss.peakMb, 0)})`,
      b.check,
      `${f(b.preloadMs / 1000, 1)} s`,
      f(b.background, 0),
    ];
  });
  const table = markdownTable(
    [
      "20,000 no-op events/jobs, concurrency 10",
      "ordering keys",
      "per s",
      "time s",
      "hookinbox ÷ graphile default / fast",
      "CPU % worker / PostgreSQL / others / rest",
      "RSS MB start → end (peak)",
      "check",
      "preload (untimed)",
      "background CPU % before",
    ],
    rows,
  );
  const hookOn = burns.find((b) => b.system === "hookinbox" && b.keys > 0);
  if (hookOn) {
    const lines = ["default", "fast"].map((mode) => {
      const g = graphile(mode, hookOn.keys);
      if (!g) return "";
      const ratio = hookOn.perSecond / g.perSecond;
      return `vs graphile-worker ${mode} ${f(ratio)}× → ${ratio >= 1 ? "met" : "NOT met"}`;
    });
    table.push(
      "",
      `Goal (hookinbox ≥ 1.0× graphile-worker, ordering keys on): ${lines.join("; ")}.`,
    );
  }
  return table;
}

export function latencyTable(rows: readonly LatencyRow[], count: number): string[] {
  return markdownTable(
    [
      `enqueue → handler start (${int(count)} sequential, idle worker)`,
      "p50 ms",
      "p90 ms",
      "p99 ms",
      "max ms",
      "enqueue call p50 / p99 ms",
      "background CPU % before",
    ],
    rows.map((l) => [
      l.system === "hookinbox"
        ? "hookinbox: store.accept → worker process (LISTEN/NOTIFY)"
        : `${l.system}: addJob → runner process (LISTEN/NOTIFY)`,
      f(l.start.p50),
      f(l.start.p90),
      f(l.start.p99),
      f(l.start.max),
      `${f(l.enqueue.p50)} / ${f(l.enqueue.p99)}`,
      f(l.background, 0),
    ]),
  );
}

const HEADING = "## PostgreSQL: ingest and processing vs graphile-worker";
const START =
  "<!-- bench:postgres results: generated by `npm run bench:postgres -- --write-docs` -->";
const END = "<!-- /bench:postgres results -->";

/**
 * Replaces the generated block of the PostgreSQL section; appends the section (heading and
 * block only, the prose is written by hand) when docs/BENCHMARKS.md does not have it yet.
 * Other sections are never touched.
 */
export function writeDocs(lines: string[]): void {
  const file = join(repoRoot, "docs/BENCHMARKS.md");
  const block = [START, "", ...lines, "", END].join("\n");
  let doc = existsSync(file) ? readFileSync(file, "utf8") : "# Benchmarks\n";
  const from = doc.indexOf(START);
  const to = doc.indexOf(END);
  if (from >= 0 && to > from) doc = doc.slice(0, from) + block + doc.slice(to + END.length);
  else doc = `${doc.trimEnd()}\n\n${HEADING}\n\n### Results\n\n${block}\n`;
  writeFileSync(file, doc);
}
