// npm run bench:listing [-- --events 1000000] [-- --runs 100] [-- --store sqlite|postgres]
//
// Listing and filtering events with N stored (default 1,000,000), on both stores: the latency of
// the first page and of the 100th page (50 events per page, reached by its cursor), p50 and p99
// over --runs repetitions, for each filter the admin API, CLI and dashboard offer. The events are
// bulk-loaded with SQL (bench/listing/load.ts) into a freshly migrated store, then read through
// the store's own `listEvents`, as the admin API does. PostgreSQL: a fresh database on
// DATABASE_URL (else the machine's server), dropped afterwards. Peak RSS of this process is
// printed beside the figures: a page must cost the same at page 1 and page 100, and memory must
// not grow with the table.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../src/store/open-store.ts";
import type { EventQuery, Store } from "../src/store/types.ts";
import { loadPostgres, loadSqlite } from "./listing/load.ts";
import { createDatabase, databaseUrl, dropDatabase } from "./postgres/db.ts";

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const events = Number(arg("events") ?? 1_000_000);
if (!(events >= 500_000))
  throw new Error("--events must be at least 500000 (page 100 of a 1% filter)");
const runs = Number(arg("runs") ?? 100);
const only = arg("store");

const scenarios: ReadonlyArray<{ name: string; query: EventQuery }> = [
  { name: "no filter", query: {} },
  { name: "source", query: { source: "stripe" } },
  { name: "type", query: { type: "type.7" } },
  { name: "status (1%)", query: { status: "dead" } },
  { name: "source + type", query: { source: "stripe", type: "type.8" } },
  { name: "source + status", query: { source: "stripe", status: "dead" } },
  { name: "type + status", query: { type: "type.0", status: "dead" } },
];

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 50);

function percentile(sorted: readonly number[], p: number): number {
  return (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
  );
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const start = process.hrtime.bigint();
  const result = await work();
  return [result, Number(process.hrtime.bigint() - start) / 1e6];
}

interface Row {
  store: string;
  scenario: string;
  first: { p50: number; p99: number };
  hundredth: { p50: number; p99: number };
}

async function measure(storeName: string, store: Store): Promise<Row[]> {
  const rows: Row[] = [];
  for (const { name, query } of scenarios) {
    // Walk to page 100 once, keeping its cursor.
    let cursor: string | undefined;
    for (let page = 1; page < 100; page++) {
      const result = await store.listEvents({ ...query, limit: 50, cursor });
      if (!result.nextCursor) throw new Error(`${name}: only ${page} pages; load more --events`);
      cursor = result.nextCursor;
    }
    const first: number[] = [];
    const hundredth: number[] = [];
    for (let i = 0; i < runs; i++) {
      const [a, ms1] = await timed(() => store.listEvents({ ...query, limit: 50 }));
      const [b, ms100] = await timed(() => store.listEvents({ ...query, limit: 50, cursor }));
      if (a.items.length !== 50 || b.items.length !== 50) throw new Error(`${name}: short page`);
      first.push(ms1);
      hundredth.push(ms100);
    }
    first.sort((x, y) => x - y);
    hundredth.sort((x, y) => x - y);
    rows.push({
      store: storeName,
      scenario: name,
      first: { p50: percentile(first, 50), p99: percentile(first, 99) },
      hundredth: { p50: percentile(hundredth, 50), p99: percentile(hundredth, 99) },
    });
  }
  return rows;
}

async function sqlite(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), "hookinbox-listing-"));
  try {
    const path = join(dir, "listing.db");
    const migrated = openStore(`sqlite:${path}`);
    await migrated.migrate();
    await migrated.close();
    const started = Date.now();
    loadSqlite(path, events, Date.now());
    console.log(
      `sqlite: loaded ${events} events in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    const store = openStore(`sqlite:${path}`);
    await store.migrate();
    try {
      return await measure("sqlite", store);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres(): Promise<Row[]> {
  const name = await createDatabase("listing");
  try {
    const url = databaseUrl(name, { schema: "hookinbox" });
    const migrated = openStore(url);
    await migrated.migrate();
    await migrated.close();
    const started = Date.now();
    await loadPostgres(databaseUrl(name), "hookinbox", events, Date.now());
    console.log(
      `postgres: loaded ${events} events in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    const store = openStore(url);
    await store.migrate();
    try {
      return await measure("postgres", store);
    } finally {
      await store.close();
    }
  } finally {
    await dropDatabase(name);
  }
}

const rows: Row[] = [];
if (only !== "postgres") rows.push(...(await sqlite()));
if (only !== "sqlite") rows.push(...(await postgres()));
clearInterval(sampler);
const f = (n: number) => n.toFixed(2);
console.log(
  `\nbench:listing — ${events.toLocaleString("en")} events, 50 per page, ${runs} runs per figure (ms)\n`,
);
console.log("| store | filter | page 1 p50 | page 1 p99 | page 100 p50 | page 100 p99 |");
console.log("|---|---|---:|---:|---:|---:|");
for (const r of rows) {
  console.log(
    `| ${r.store} | ${r.scenario} | ${f(r.first.p50)} | ${f(r.first.p99)} | ${f(r.hundredth.p50)} | ${f(r.hundredth.p99)} |`,
  );
}
console.log(`\npeak RSS of the bench process: ${(peakRss / 2 ** 20).toFixed(0)} MB`);
