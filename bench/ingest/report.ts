// Machine facts, the results table, and the generated block of docs/BENCHMARKS.md.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import type { LoadResult } from "./clients.ts";
import { repoRoot } from "./servers.ts";
import { type StoreCheck, sqliteVersion } from "./verify-store.ts";

export interface ScenarioResult {
  readonly name: string;
  readonly background: number; // machine CPU % (of a core) used by others just before the scenario
  readonly warm: LoadResult;
  readonly sat: LoadResult;
  /** % of one core during the saturation run; rest = kernel work not charged to a process + others */
  readonly satCpu: { serverPct: number; clientPct: number; restPct: number };
  readonly fixed: readonly LoadResult[]; // one per fixed rate
  readonly rss: { startMb: number; afterWarmupMb: number; endMb: number; peakMb: number };
  readonly store: StoreCheck | null;
}

export function machineFacts(workDir: string): { lines: string[] } {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? "?";
  // statfs cannot tell ext2, ext3 and ext4 apart (same magic number).
  const fs = execFileSync("stat", ["-f", "-c", "%T", workDir], { encoding: "utf8" })
    .trim()
    .replace("ext2/ext3", "ext2/3/4");
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repoRoot, encoding: "utf8" });
  const changed = git("status", "--porcelain", "src").split("\n").filter(Boolean).length;
  return {
    lines: [
      `date: ${new Date().toISOString()}`,
      `nproc: ${availableParallelism()}, CPU: ${cpu}, RAM: ${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
      `Node ${process.version}, SQLite ${sqliteVersion()} (better-sqlite3), store in ${tmpdir()} (${fs})`,
      `hookinbox at ${git("rev-parse", "--short", "HEAD").trim()}` +
        (changed ? ` + ${changed} uncommitted paths in src/` : ""),
    ],
  };
}

const ms = (r: LoadResult) => `${r.p50Ms.toFixed(2)} / ${r.p99Ms.toFixed(2)}`;

export function printTable(results: readonly ScenarioResult[], rates: readonly number[]): string {
  const bare = results[0]!.sat.rps;
  const rows = results.map((r) => {
    const loads = [r.warm, r.sat, ...r.fixed];
    const non2xx = loads.reduce((n, l) => n + l.non2xx, 0);
    const errors = loads.reduce((n, l) => n + l.socketErrors, 0);
    const fixed = r.fixed.map((l, i) => {
      const short = l.rps < rates[i]! * 0.95 ? ` (only ${Math.round(l.rps)}/s)` : "";
      return `${ms(l)}${short}`;
    });
    const { startMb, afterWarmupMb, endMb, peakMb } = r.rss;
    return [
      r.name,
      Math.round(r.sat.rps).toLocaleString("en-US"),
      `${((100 * r.sat.rps) / bare).toFixed(0)}%`,
      ms(r.sat),
      ...fixed,
      [r.satCpu.serverPct, r.satCpu.clientPct, r.satCpu.restPct]
        .map((p) => p.toFixed(0))
        .join(" / "),
      `${non2xx}${errors ? ` (+${errors} socket errors)` : ""}`,
      [startMb, afterWarmupMb, endMb].map((mb) => mb.toFixed(0)).join(" → ") +
        ` (${peakMb.toFixed(0)})`,
      r.store
        ? `${r.store.pass ? "OK" : "MISMATCH"}: ${r.store.events} events, ${r.store.receipts} receipts`
        : "n/a",
    ];
  });
  const header = [
    "server",
    "req/s at saturation",
    "vs bare",
    "p50 / p99 ms at saturation",
    ...rates.map((rate) => `p50 / p99 ms at ${rate.toLocaleString("en-US")} req/s`),
    "CPU % at saturation: server / client / rest",
    "non-2xx",
    "RSS MB: start → warm → end (peak)",
    "store check",
  ];
  const table = markdownTable(header, rows);
  const unique = results.find((r) => r.name.includes("unique"));
  if (unique) table.push("", goal(unique, bare, rates));
  for (const r of results) if (r.store) table.push("", `${r.name}: ${r.store.summary}.`);
  const background = results.map((r) => `${r.background.toFixed(0)}%`).join(", ");
  table.push(
    "",
    `Background CPU (other processes, % of a core) before each scenario: ${background}.`,
  );
  return table.join("\n");
}

/**
 * A markdown table padded the way `biome format` pads it, so `npm run check` stays clean after
 * --write-docs. Widths count code points: keep cells free of emoji (biome counts those as 2).
 */
function markdownTable(header: string[], rows: string[][]): string[] {
  const width = (text: string) => [...text].length;
  const widths = header.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ""))));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c + " ".repeat(widths[i]! - width(c))).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}

/** The issue's goal: ≥ 50% of bare's throughput with p99 under 25 ms. */
function goal(r: ScenarioResult, bare: number, rates: readonly number[]): string {
  const ratio = r.sat.rps / bare;
  const yes = (ok: boolean) => (ok ? "met" : "NOT met");
  return (
    `Goal (hookinbox ≥ 50% of bare, p99 < 25 ms): throughput ${(100 * ratio).toFixed(0)}% → ${yes(ratio >= 0.5)}` +
    `${ratio < 0.5 ? ` (${Math.round(bare * 0.5 - r.sat.rps).toLocaleString("en-US")} req/s short)` : ""}; ` +
    `p99 at saturation ${r.sat.p99Ms.toFixed(1)} ms → ${yes(r.sat.p99Ms < 25)}; ` +
    r.fixed
      .map(
        (l, i) =>
          `p99 at ${rates[i]!.toLocaleString("en-US")} req/s ${l.p99Ms.toFixed(1)} ms → ${yes(l.p99Ms < 25)}`,
      )
      .join("; ") +
    "."
  );
}

const START = "<!-- bench:ingest results: generated by `npm run bench:ingest -- --write-docs` -->";
const END = "<!-- /bench:ingest results -->";

/** Replaces the generated block of docs/BENCHMARKS.md (the prose around it is hand-written). */
export function writeDocs(facts: string[], table: string, options: { generator: string }): void {
  const file = join(repoRoot, "docs/BENCHMARKS.md");
  const doc = readFileSync(file, "utf8");
  const from = doc.indexOf(START);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error(`${file}: generated-block markers not found`);
  const block = [
    START,
    "",
    ...facts.map((f) => `- ${f}`),
    `- saturation generator: ${options.generator} (-t1 -c50); fixed rate: bench/ingest/paced-client.ts`,
    "",
    table,
    "",
    END,
  ].join("\n");
  writeFileSync(file, doc.slice(0, from) + block + doc.slice(to + END.length));
}
