// npm run bench:postgres [-- --write-docs] [-- --profile] [-- --ingest-only] [-- --scale-out]
//   [-- --queue-only]
//
// hookinbox on PostgreSQL against its baselines, in one run, on the same PostgreSQL server
// (DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres). Every scenario gets a fresh
// database, created here and dropped afterwards; the server's settings are read with SHOW and
// printed, never changed. Every measured side is its own process.
//
// 1. Ingest: bare node:http, the PostgreSQL durable stub (postgres/durable-stub.ts: the least a
//    durable PostgreSQL gateway can do) and `hookinbox start` with the audit log on (the default)
//    and off (store = the fresh database, ?schema=hookinbox), through the bench:ingest harness:
//    pre-signed Stripe ~2 KB requests with unique ids, wrk -t1 -c50 (warm-up, then saturation),
//    then bench/ingest/paced-client.ts at a fixed rate; afterwards the database must hold exactly
//    the unique ids that got a 2xx (up to those in flight at stop), for the stub too.
//    Scale-out: 1, 2 and 4 `hookinbox start` processes on one database, one wrk -t1 per gateway
//    (50 / n connections each, its own slice), warm-up then saturation; PostgreSQL's CPU per
//    accepted event, the gateways', and the same store check.
// 2. Burn-down of 20,000 no-op events (hookinbox-burndown.ts: store.accept preload, then
//    inbox.startWorker({ concurrency: 10 })) vs 20,000 no-op jobs through graphile-worker 0.18
//    (graphile-burndown.ts, concurrency 10) in its default mode and its documented fast mode;
//    ordering keys off, and on (1,000 keys / 1,000 named queues).
// 3. Enqueue-to-start latency: 1,000 sequential events/jobs after 50 warm-up ones, enqueued from
//    this process, handled by a worker process (latency.ts).
//
// Before each scenario the machine's background CPU is measured (waits up to ~6 s for < 15% of a
// core); during each, CPU is split between the process under test, PostgreSQL (backends of the
// scenario's database plus the server's own processes) and the rest. --write-docs refuses when
// others used the CPU.
// --profile: instead of the above, one hookinbox burn-down (keys on) with the V8 CPU profiler in
// the worker process and PostgreSQL's per-function timing (track_functions on that database only),
// EXPLAIN ANALYZE of the claim's inner queries mid-run, then the gateway under --cpu-prof.
// --ingest-only, --scale-out, --queue-only (burn-downs and latencies): only those parts, any of them
// together.
// --write-docs writes only after a whole run.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { CONNECTIONS, type LoadResult, paced, saturate } from "./ingest/clients.ts";
import { printProfileTop } from "./ingest/profile-top.ts";
import { machineFacts } from "./ingest/report.ts";
import { phaseIds, writeSignedSlice } from "./ingest/requests.ts";
import {
  backgroundCpu,
  cpuWindow,
  repoRoot,
  type ServerUnderTest,
  startBare,
  wrkVersion,
} from "./ingest/servers.ts";
import { startChild } from "./postgres/child.ts";
import {
  BASE_URL,
  createDatabase,
  databaseUrl,
  dropDatabase,
  processCpuWindow,
  serverSettings,
} from "./postgres/db.ts";
import { graphileLatency, hookinboxLatency } from "./postgres/latency.ts";
import {
  type BurnResult,
  burnTable,
  type CpuSplit,
  type IngestResult,
  ingestTable,
  type LatencyRow,
  latencyTable,
  type ScaleResult,
  scaleTable,
  usPer,
  writeDocs,
} from "./postgres/report.ts";
import {
  STUB_SCHEMA,
  startDurableStubPostgres,
  startHookinboxPostgres,
} from "./postgres/servers.ts";
import { verifyPostgres } from "./postgres/verify.ts";

const EVENTS = 20_000;
const KEYS = 1_000;
const CONCURRENCY = 10;
const WARMUP_S = 2;
const SATURATION_S = 6;
// hookinbox on PostgreSQL saturates near 3,000 req/s here (PostgreSQL shares the 2 cores), so
// 1,000 req/s is ~⅓ of its capacity: the latency of the unloaded path, not of a queue.
const FIXED_RATE = 1_000;
const FIXED_S = 3;
// Scale-out: this many `hookinbox start` processes on one database, the ingest load spread over them.
const SCALE_OUT = [1, 2, 4];
const LATENCY_WARMUP = 50;
const LATENCY_EVENTS = 1_000;
const QUIET = 15; // % of a core: "the machine is idle enough"
const OTHERS_LIMIT = 15; // % of a core used by other people's processes during a run: disturbed

const args = new Set(process.argv.slice(2));
const packageVersion = (name: string) =>
  JSON.parse(readFileSync(join(repoRoot, "node_modules", name, "package.json"), "utf8")).version;
const work = mkdtempSync(join(tmpdir(), "hookinbox-bench-pg-"));
const wrk = wrkVersion();
const generator = wrk ? "wrk" : "autocannon";
const settings = await serverSettings();
const facts = [
  ...machineFacts(work).lines.filter((l) => !l.startsWith("Node ")),
  `Node ${process.version}, graphile-worker ${packageVersion("graphile-worker")}, pg ${packageVersion("pg")}`,
  `PostgreSQL ${settings.server_version} on this machine (${new URL(BASE_URL).host}), sharing its 2 cores: fsync ${settings.fsync}, synchronous_commit ${settings.synchronous_commit}, wal_sync_method ${settings.wal_sync_method}, full_page_writes ${settings.full_page_writes}, commit_delay ${settings.commit_delay}, shared_buffers ${settings.shared_buffers}, autovacuum ${settings.autovacuum}`,
  `ingest: ${wrk ?? "autocannon 9 (wrk not installed)"} -t1 -c50, warm-up ${WARMUP_S} s, saturation ${SATURATION_S} s; fixed rate ${FIXED_RATE} req/s for ${FIXED_S} s (bench/ingest/paced-client.ts)`,
];
console.log(facts.join("\n"));
const databases = new Set<string>();

async function freshDatabase(tag: string): Promise<string> {
  const name = await createDatabase(tag);
  databases.add(name);
  return name;
}
async function dropFresh(name: string): Promise<void> {
  await dropDatabase(name);
  databases.delete(name);
}

/** Waits (up to ~6 s) for other processes to use < QUIET % of a core; returns the last reading. */
async function quiet(label: string): Promise<number> {
  let background = await backgroundCpu();
  for (let tries = 0; background > QUIET && tries < 5; tries++) background = await backgroundCpu();
  console.log(
    `\n${label} · background CPU before start: ${background.toFixed(0)}% of a core` +
      (background > QUIET ? " — WARNING: something else is running; numbers are disturbed" : ""),
  );
  return background;
}

/**
 * CPU of the processes under test (`pids`, summed), PostgreSQL and everyone else over a window;
 * `clientCpuS`: the load generators'.
 */
function cpuSplitWindow(pids: readonly number[], database: string) {
  const machines = pids.map((pid) => cpuWindow(pid));
  const processes = processCpuWindow(database);
  return (clientCpuS = 0): CpuSplit => {
    const [m, ...more] = machines.map((machine) => machine());
    const mainPct = more.reduce((sum, w) => sum + w.serverPct, m!.serverPct);
    const p = processes();
    const clientPct = (100 * clientCpuS) / m!.seconds;
    const pgPct = p.pgOursPct + p.pgAuxPct;
    const othersPct = p.foreignPct + p.pgOtherDbPct;
    return {
      mainPct,
      pgPct,
      clientPct,
      othersPct,
      restPct: Math.max(0, m!.machinePct - mainPct - pgPct - clientPct - othersPct),
      seconds: m!.seconds,
    };
  };
}

const disturbed = (c: CpuSplit) =>
  c.othersPct > OTHERS_LIMIT
    ? ` — WARNING: other processes used ${c.othersPct.toFixed(0)}% of a core meanwhile`
    : "";

const logLoad = (name: string, label: string, r: LoadResult) =>
  console.log(
    `  ${name} · ${label}: ${Math.round(r.rps)} req/s, p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms, ` +
      `non-2xx ${r.non2xx}, socket errors ${r.socketErrors}${r.wraps ? `, SLICE RAN OUT ${r.wraps}×` : ""}`,
  );

let ceilingRps = 40_000;

/** `count` pre-signed requests with unique ids (tag + phase) in `dir/<phase>.requests`. */
function signedSlice(dir: string, tag: string, phase: string, count: number): string {
  const file = join(dir, `${phase}.requests`);
  writeSignedSlice(file, phaseIds(`${tag}_${phase}`, Math.ceil(count), false));
  return file;
}

async function ingest(
  name: string,
  kind: IngestResult["kind"],
  profile = false,
  extra: Record<string, unknown> = {},
): Promise<IngestResult> {
  const background = await quiet(`ingest, ${name}`);
  const dir = join(work, `ingest-${kind}`);
  mkdirSync(dir, { recursive: true });
  const db = kind === "bare" ? "" : await freshDatabase(`ingest_${kind}`);
  const slice = (phase: string, count: number) => signedSlice(dir, kind, phase, count);
  const server: ServerUnderTest =
    kind === "bare"
      ? await startBare()
      : kind === "stub"
        ? await startDurableStubPostgres(databaseUrl(db))
        : await startHookinboxPostgres(
            dir,
            databaseUrl(db, { schema: "hookinbox" }),
            profile,
            extra,
          );
  try {
    const warm = await saturate(
      generator,
      server.target,
      slice("warmup", ceilingRps * WARMUP_S * 1.2),
      WARMUP_S,
    );
    logLoad(name, "warm-up", warm);
    const afterWarmupMb = server.memory.nowMb();
    const satFile = slice("saturation", Math.min(ceilingRps * 1.1, warm.rps * 2.5) * SATURATION_S);
    const cpu = cpuSplitWindow([server.pid], db || "-none-");
    const sat = await saturate(generator, server.target, satFile, SATURATION_S);
    const satCpu = cpu(sat.clientCpuS);
    logLoad(name, "saturation", sat);
    console.log(
      `  ${name} · CPU during saturation (% of a core): server ${satCpu.mainPct.toFixed(0)}, PostgreSQL ${satCpu.pgPct.toFixed(0)}, ` +
        `load generator ${satCpu.clientPct.toFixed(0)}, others ${satCpu.othersPct.toFixed(0)}, rest ${satCpu.restPct.toFixed(0)}` +
        disturbed(satCpu),
    );
    if (kind === "bare") ceilingRps = sat.rps;
    let fixed = sat;
    if (!profile) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      fixed = await paced(
        server.target,
        slice(`fixed${FIXED_RATE}`, FIXED_RATE * FIXED_S),
        FIXED_RATE,
      );
      logLoad(name, `fixed ${FIXED_RATE}/s`, fixed);
    }
    const endMb = server.memory.nowMb();
    await server.stop();
    const rss = {
      startMb: server.memory.startMb,
      afterWarmupMb,
      endMb,
      peakMb: server.memory.peakMb(),
    };
    const loads = profile ? [warm, sat] : [warm, sat, fixed];
    const schema = kind === "stub" ? STUB_SCHEMA : "hookinbox";
    const store = db ? await verifyPostgres(databaseUrl(db), schema, loads) : null;
    if (store)
      console.log(`  ${name} · store: ${store.pass ? "OK" : "MISMATCH"}: ${store.summary}`);
    return { name, kind, background, warm, sat, satCpu, fixed, rss, store };
  } catch (error) {
    await server.stop();
    throw error;
  } finally {
    if (db) await dropFresh(db);
  }
}

/**
 * Scale-out: `gateways` `hookinbox start` processes on one fresh database, each on its own port,
 * each loaded by its own wrk -t1 with 50 / gateways connections (so the total load is the ingest
 * scenario's) and its own slice of unique pre-signed requests, all started together: warm-up,
 * then saturation, whose CPU is split between the gateways (together), PostgreSQL, the wrks and
 * the rest. Afterwards every id any wrk got a 2xx for must be in the database.
 */
async function scaleOut(gateways: number): Promise<ScaleResult> {
  const label = `scale-out, ${gateways} hookinbox gateway${gateways > 1 ? "s" : ""}`;
  const background = await quiet(label);
  const db = await freshDatabase(`scale_${gateways}`);
  const connections = Math.ceil(CONNECTIONS / gateways);
  const servers: ServerUnderTest[] = [];
  try {
    // One after another: the first applies the migrations, the others find them applied.
    for (let g = 0; g < gateways; g++) {
      const dir = join(work, `scale-${gateways}-${g}`);
      mkdirSync(dir, { recursive: true });
      servers.push(await startHookinboxPostgres(dir, databaseUrl(db, { schema: "hookinbox" })));
    }
    const all = (phase: string, seconds: number, total: number) => {
      const slices = servers.map((_, g) =>
        signedSlice(
          join(work, `scale-${gateways}-${g}`),
          `scale${gateways}_${g}`,
          phase,
          total / gateways,
        ),
      );
      return Promise.all(
        servers.map((server, g) =>
          saturate(generator, server.target, slices[g]!, seconds, connections),
        ),
      );
    };
    const warm = await all("warmup", WARMUP_S, ceilingRps * WARMUP_S * 1.2);
    // Per gateway: what all of them did in the warm-up (× 2.5, as ingest sizes it), with room
    // for one gateway's wrk getting more than its share, so no slice runs out.
    const warmRps = warm.reduce((n, l) => n + l.rps, 0);
    const total = Math.min(ceilingRps * 1.1, Math.max(warmRps * 2.5, 5_000)) * SATURATION_S * 2;
    const window = cpuSplitWindow(
      servers.map((server) => server.pid),
      db,
    );
    const sat = await all("saturation", SATURATION_S, total);
    const cpu = window(sat.reduce((n, l) => n + l.clientCpuS, 0));
    for (const [g, l] of sat.entries()) logLoad(label, `saturation, gateway ${g + 1}`, l);
    const rps = sat.reduce((n, l) => n + l.rps, 0);
    const ok = sat.reduce((n, l) => n + l.ok, 0);
    console.log(
      `  ${label} · ${Math.round(rps)} req/s in all; CPU (% of a core): gateways ${cpu.mainPct.toFixed(0)}, ` +
        `PostgreSQL ${cpu.pgPct.toFixed(0)}, load generators ${cpu.clientPct.toFixed(0)}, others ${cpu.othersPct.toFixed(0)}, ` +
        `rest ${cpu.restPct.toFixed(0)}; per 2xx: PostgreSQL ${usPer(cpu.pgPct, cpu, ok).toFixed(0)} µs, ` +
        `gateways ${usPer(cpu.mainPct, cpu, ok).toFixed(0)} µs${disturbed(cpu)}`,
    );
    await Promise.all(servers.splice(0).map((server) => server.stop()));
    const store = await verifyPostgres(databaseUrl(db), "hookinbox", [...warm, ...sat]);
    console.log(`  ${label} · store: ${store.pass ? "OK" : "MISMATCH"}: ${store.summary}`);
    return { gateways, connections, background, sat, cpu, store };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await dropFresh(db);
  }
}

interface ChildBurn {
  seconds: number;
  perSecond: number;
  preloadMs: number;
  startupMs: number;
  distinctKeys: number;
  rss: { startMb: number; endMb: number; peakMb: number };
  pass: boolean;
  done: number;
  calls: number;
  orderViolations: number;
  overlaps: number;
  errors?: number;
  attempts?: number;
  claims?: { calls: number; leased: number };
}

async function burnDown(
  system: "hookinbox" | "graphile-worker",
  mode: "hookinbox" | "default" | "fast",
  keys: number,
  hooks: { onStart?: (db: string) => void; profile?: string; trackFunctions?: boolean } = {},
): Promise<BurnResult & { db?: string }> {
  const label = system === "hookinbox" ? "hookinbox" : `graphile-worker, ${mode} mode`;
  const background = await quiet(
    `burn-down, ${label}, ordering keys ${keys ? `on (${keys})` : "off"}`,
  );
  const db = await freshDatabase(system === "hookinbox" ? "burn_hib" : `burn_gw_${mode}`);
  if (hooks.trackFunctions) {
    const admin = new pg.Client(BASE_URL);
    await admin.connect();
    await admin.query(`ALTER DATABASE ${db} SET track_functions = 'pl'`);
    await admin.end();
  }
  let window: ReturnType<typeof cpuSplitWindow> | null = null;
  let cpu: CpuSplit | null = null;
  const child =
    system === "hookinbox"
      ? startChild(
          "hookinbox-burndown.ts",
          [
            databaseUrl(db, { schema: "hookinbox" }),
            String(EVENTS),
            String(keys),
            String(CONCURRENCY),
            ...(hooks.profile ? [hooks.profile] : []),
          ],
          onMessage,
        )
      : startChild(
          "graphile-burndown.ts",
          [databaseUrl(db), String(EVENTS), String(keys), String(CONCURRENCY), mode, "2kb"],
          onMessage,
        );
  function onMessage(message: unknown) {
    const m = message as { phase?: string };
    if (m.phase === "start") {
      window = cpuSplitWindow([child.process.pid!], db);
      hooks.onStart?.(db);
    }
    if (m.phase === "end" && window) cpu = window();
  }
  try {
    const r = (await child.result) as ChildBurn;
    const split = cpu ?? {
      mainPct: 0,
      pgPct: 0,
      clientPct: 0,
      othersPct: 0,
      restPct: 0,
      seconds: 0,
    };
    const check =
      `${r.pass ? "OK" : "FAILED"}: ${r.done} done` +
      (r.attempts !== undefined
        ? `, ${r.attempts} attempts`
        : `, ${r.calls} runs, ${r.errors ?? 0} errors`) +
      (keys ? `, ${r.orderViolations} out of order, ${r.overlaps} overlapping` : "");
    console.log(
      `${label}, keys ${keys ? "on" : "off"}: ${Math.round(r.perSecond)}/s (${r.seconds.toFixed(2)} s from first start; ` +
        `startup ${r.startupMs.toFixed(0)} ms), CPU worker ${split.mainPct.toFixed(0)}% / PostgreSQL ${split.pgPct.toFixed(0)}% / others ${split.othersPct.toFixed(0)}% / rest ${split.restPct.toFixed(0)}%, ` +
        `RSS ${r.rss.startMb.toFixed(0)} → ${r.rss.endMb.toFixed(0)} MB (peak ${r.rss.peakMb.toFixed(0)}), preload ${(r.preloadMs / 1000).toFixed(1)} s` +
        (r.claims
          ? `, ${r.claims.calls} claims (${(r.claims.leased / r.claims.calls).toFixed(1)} per claim)`
          : "") +
        `, check ${check}` +
        disturbed(split),
    );
    return {
      label,
      system,
      mode,
      keys,
      distinctKeys: r.distinctKeys,
      background,
      preloadMs: r.preloadMs,
      startupMs: r.startupMs,
      seconds: r.seconds,
      perSecond: r.perSecond,
      cpu: split,
      rss: r.rss,
      pass: r.pass,
      check,
      db,
    };
  } finally {
    if (!hooks.trackFunctions) await dropFresh(db);
  }
}

async function latency(system: "hookinbox" | "default" | "fast"): Promise<LatencyRow> {
  const background = await quiet(
    `latency, ${system === "hookinbox" ? "hookinbox" : `graphile-worker ${system}`}`,
  );
  const db = await freshDatabase(`lat_${system}`);
  try {
    const r =
      system === "hookinbox"
        ? await hookinboxLatency(
            databaseUrl(db, { schema: "hookinbox" }),
            LATENCY_WARMUP,
            LATENCY_EVENTS,
          )
        : await graphileLatency(databaseUrl(db), system, LATENCY_WARMUP, LATENCY_EVENTS);
    console.log(
      `${r.system}: enqueue→start p50 ${r.start.p50.toFixed(2)} / p90 ${r.start.p90.toFixed(2)} / p99 ${r.start.p99.toFixed(2)} / max ${r.start.max.toFixed(2)} ms; ` +
        `enqueue call p50 ${r.enqueue.p50.toFixed(2)} ms`,
    );
    return { ...r, background };
  } finally {
    await dropFresh(db);
  }
}

// ---------- --profile ----------

const EXPLAINS: Array<{ what: string; sql: string; params: (c: pg.Client) => Promise<unknown[]> }> =
  [
    {
      what: "claim: candidate rows (hookinbox_claim's FOR loop query)",
      sql: `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT d.id, d.target, d.ordering_key, d.order_version FROM deliveries d
          WHERE d.status = 'pending' AND d.run_at <= $1 ORDER BY d.run_at, d.id LIMIT 100 FOR UPDATE SKIP LOCKED`,
      params: async () => [Date.now()],
    },
    {
      what: "claim: 'anything ahead of me or in flight for my key?' (keys on)",
      sql: `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT 1 FROM deliveries o, (SELECT target, ordering_key, order_version, id FROM deliveries
            WHERE status = 'pending' AND ordering_key IS NOT NULL ORDER BY run_at, id LIMIT 1) c
          WHERE o.target = c.target AND o.ordering_key = c.ordering_key
            AND (o.status IN ('pending', 'blocked', 'running') OR o.blocks_key) AND o.id <> c.id
            AND (o.status = 'running' OR o.blocks_key OR o.order_version < c.order_version
                 OR (o.order_version = c.order_version AND o.id < c.id)) LIMIT 1`,
      params: async () => [],
    },
    {
      what: "complete: hookinbox_refresh_event's UPDATE, for a pending event (run alone, plan not cached)",
      sql: `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) UPDATE events SET status = CASE
            WHEN EXISTS (SELECT 1 FROM deliveries WHERE event_id = $1 AND status IN ('pending', 'blocked', 'running')) THEN 'pending'
            WHEN EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = $1 AND d.status = 'dead'
                         AND NOT EXISTS (SELECT 1 FROM deliveries r WHERE r.event_id = d.event_id AND r.target = d.target
                                         AND r.id > d.id AND r.status IN ('done', 'stale'))) THEN 'dead'
            ELSE 'done' END
          WHERE id = $1`,
      params: async (c) => {
        const { rows } = await c.query(
          "SELECT event_id FROM deliveries WHERE status = 'pending' ORDER BY run_at DESC LIMIT 1",
        );
        return [rows[0]?.event_id ?? ""];
      },
    },
  ];

async function profileRun(): Promise<void> {
  const file = join(work, "burndown.cpuprofile");
  const explained: string[] = [];
  const burn = await burnDown("hookinbox", "hookinbox", KEYS, {
    profile: file,
    trackFunctions: true,
    onStart: (db) => {
      // Mid-run (5 s in): the claim's inner queries, each in a transaction rolled back at once.
      setTimeout(async () => {
        const client = new pg.Client(databaseUrl(db));
        await client.connect();
        await client.query("SET search_path TO hookinbox");
        for (const e of EXPLAINS) {
          await client.query("BEGIN");
          const { rows } = await client.query(e.sql, await e.params(client));
          await client.query("ROLLBACK");
          explained.push(`-- ${e.what}\n${rows.map((r) => r["QUERY PLAN"]).join("\n")}`);
        }
        await client.end();
      }, 5_000);
    },
  });
  printProfileTop(file, 25);
  console.log("\nEXPLAIN ANALYZE mid-run:\n");
  console.log(explained.join("\n\n"));
  await new Promise((resolve) => setTimeout(resolve, 1500)); // function stats flush at backend exit
  const client = new pg.Client(databaseUrl(burn.db!));
  await client.connect();
  const functions = await client.query(
    `SELECT funcname, calls, round(total_time::numeric) AS total_ms, round(self_time::numeric) AS self_ms,
            round((total_time / calls)::numeric, 3) AS ms_per_call FROM pg_stat_user_functions ORDER BY total_time DESC`,
  );
  console.log("\nPostgreSQL time per function (track_functions = pl, this database only):");
  console.table(functions.rows);
  const tables = await client.query(
    `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, seq_scan, idx_scan FROM pg_stat_user_tables
     WHERE schemaname = 'hookinbox' AND (n_tup_ins + n_tup_upd) > 0 ORDER BY relname`,
  );
  console.table(tables.rows);
  const indexes = await client.query(
    `SELECT relname, indexrelname, idx_scan, idx_tup_read FROM pg_stat_user_indexes
     WHERE schemaname = 'hookinbox' AND idx_scan > 0 ORDER BY idx_tup_read DESC`,
  );
  console.table(indexes.rows);
  await client.end();
  await dropFresh(burn.db!);

  await ingest("bare node:http", "bare");
  await ingest("hookinbox gateway (under --cpu-prof)", "hookinbox", true);
  const dir = join(work, "ingest-hookinbox", "profile");
  const prof = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  if (prof) printProfileTop(join(dir, prof), 25);
}

// ---------- main ----------

async function main(): Promise<void> {
  const started = performance.now();
  if (args.has("--profile")) return profileRun();
  // --ingest-only, --scale-out, --queue-only: only those parts (any of them together); none: all.
  const parts = ["--ingest-only", "--scale-out", "--queue-only"].filter((flag) => args.has(flag));
  const only = parts.length > 0;
  const runs = (flag: string) => !only || parts.includes(flag);
  const ingests: IngestResult[] = [];
  if (runs("--ingest-only")) {
    ingests.push(
      await ingest("bare node:http", "bare"),
      await ingest("durable stub (PostgreSQL, least a durable gateway does)", "stub"),
      await ingest("hookinbox (PostgreSQL)", "hookinbox"),
      await ingest("hookinbox (PostgreSQL), audit log off", "hookinbox", false, {
        audit: { enabled: false },
      }),
    );
    const [, , auditOn, auditOff] = ingests;
    console.log(
      `audit log on/off at saturation: ${(auditOn!.sat.rps / auditOff!.sat.rps).toFixed(2)}× (issue 13's goal ≥ 0.9)`,
    );
  }
  const scales: ScaleResult[] = [];
  if (runs("--scale-out")) for (const gateways of SCALE_OUT) scales.push(await scaleOut(gateways));
  const burns: BurnResult[] = [];
  for (const keys of runs("--queue-only") ? [0, KEYS] : []) {
    burns.push(await burnDown("hookinbox", "hookinbox", keys));
    burns.push(await burnDown("graphile-worker", "default", keys));
    burns.push(await burnDown("graphile-worker", "fast", keys));
  }
  const latencies = runs("--queue-only")
    ? [await latency("hookinbox"), await latency("default"), await latency("fast")]
    : [];
  const section = (title: string, ran: boolean, table: () => string[]) =>
    ran ? ["", `${title}:`, "", ...table()] : [];
  const lines = [
    ...facts.map((l) => `- ${l}`),
    ...section("Ingest", ingests.length > 0, () => ingestTable(ingests, FIXED_RATE)),
    ...section(
      `Ingest scale-out (${SCALE_OUT.join(", ")} gateways, one database; wrk warm-up ${WARMUP_S} s, saturation ${SATURATION_S} s)`,
      scales.length > 0,
      () => scaleTable(scales),
    ),
    ...section("Burn-down", burns.length > 0, () => burnTable(burns)),
    ...section("Enqueue → start", latencies.length > 0, () =>
      latencyTable(latencies, LATENCY_EVENTS),
    ),
  ];
  console.log(
    `\n${lines.join("\n")}\n\nwhole run: ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  const failed =
    ingests.some((r) => r.store && !r.store.pass) ||
    ingests.some((r) => [r.warm, r.sat, r.fixed].some((l) => l.non2xx > 0)) ||
    scales.some((r) => !r.store.pass || r.sat.some((l) => l.non2xx > 0)) ||
    burns.some((b) => !b.pass) ||
    latencies.some((l) => !l.pass);
  if (failed) process.exitCode = 1;
  if (args.has("--write-docs") && !only) {
    const disturbed =
      [
        ...ingests.map((r) => r.background),
        ...scales.map((r) => r.background),
        ...burns.map((b) => b.background),
        ...latencies.map((l) => l.background),
      ].some((b) => b > 25) ||
      ingests.some((r) => r.satCpu.othersPct > OTHERS_LIMIT) ||
      scales.some((r) => r.cpu.othersPct > OTHERS_LIMIT) ||
      burns.some((b) => b.cpu.othersPct > OTHERS_LIMIT);
    if (disturbed)
      console.log("docs/BENCHMARKS.md NOT updated: other processes were using the CPU");
    else {
      writeDocs(lines);
      console.log("docs/BENCHMARKS.md: PostgreSQL section updated");
    }
  }
}

try {
  await main();
} finally {
  for (const db of databases) await dropDatabase(db).catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}
