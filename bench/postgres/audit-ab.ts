// node bin/run-ts.mjs bench/postgres/audit-ab.ts [rounds] [--profile] [--paced RATE]
//
// The audit log's cost on PostgreSQL ingest, A/B in one run: `hookinbox start` with the log on,
// then off, `rounds` times (alternating, each on a fresh database), under the same wrk -t1 -c50
// saturation as bench:postgres (or a fixed rate with --paced). Per run it prints req/s, the
// gateway's and PostgreSQL's CPU per accepted event (µs), and accepted events per commit from
// pg_stat_database (the batch size): CPU per event is what the shared, noisy 2-core machine
// disturbs least. PostgreSQL's time in the schema's PL/pgSQL functions (wall time, lock waits
// included) comes from track_functions = pl on the scenario's database: it measured 011's
// hookinbox_audit_append, which migration 016 dropped; since 014 accepts call none. --profile runs the gateway under
// --cpu-prof and prints, per round, the functions whose self time per accepted event differs
// most between log on and off, and the inclusive time of the audit's own code. To compare two
// commits, run a copy of this file in a checkout of each, one after the other.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { paced, saturate } from "../ingest/clients.ts";
import { phaseIds, writeSignedSlice } from "../ingest/requests.ts";
import { cpuWindow } from "../ingest/servers.ts";
import { BASE_URL, createDatabase, databaseUrl, dropDatabase, processCpuWindow } from "./db.ts";
import { startHookinboxPostgres } from "./servers.ts";

const argv = process.argv.slice(2);
const rounds = Number(argv.find((a) => /^\d+$/.test(a)) ?? 3);
const profile = argv.includes("--profile");
const pacedAt = argv.includes("--paced") ? Number(argv[argv.indexOf("--paced") + 1]) : 0;
const work = mkdtempSync(join(tmpdir(), "hookinbox-audit-ab-"));

async function dbStats(db: string) {
  const c = new pg.Client(databaseUrl(db));
  await c.connect();
  try {
    const { rows } = await c.query(
      "SELECT xact_commit::bigint AS commits FROM pg_stat_database WHERE datname = current_database()",
    );
    const events = await c
      .query("SELECT count(*)::int AS n FROM hookinbox.events")
      .then((r) => r.rows[0].n as number)
      .catch(() => 0);
    return { commits: Number(rows[0].commits), events };
  } finally {
    await c.end();
  }
}

async function functionTimes(db: string) {
  await new Promise((resolve) => setTimeout(resolve, 1500)); // stats flush at backend exit
  const c = new pg.Client(databaseUrl(db));
  await c.connect();
  try {
    const { rows } = await c.query(
      `SELECT funcname, calls::int, round(total_time::numeric, 1)::float AS total_ms,
              round(self_time::numeric, 1)::float AS self_ms FROM pg_stat_user_functions`,
    );
    return rows as Array<{ funcname: string; calls: number; total_ms: number; self_ms: number }>;
  } finally {
    await c.end();
  }
}

/** Inclusive time (µs) under each function whose name matches, from a .cpuprofile. */
function inclusive(file: string, names: readonly string[]): Map<string, number> {
  const p = JSON.parse(readFileSync(file, "utf8")) as {
    nodes: Array<{ id: number; callFrame: { functionName: string }; children?: number[] }>;
    samples: number[];
    timeDeltas: number[];
  };
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const out = new Map(names.map((n) => [n, 0]));
  p.samples.forEach((id, i) => {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = byId.get(at)?.callFrame.functionName ?? "";
      const sum = out.get(name);
      if (sum !== undefined && !seen.has(name)) {
        seen.add(name);
        out.set(name, sum + (p.timeDeltas[i] ?? 0));
      }
    }
  });
  return out;
}

const selfPerEvent = new Map<string, Map<string, number>>();
/** Self time per accepted event (µs) by function (name + file), from a .cpuprofile. */
function selfByFunction(file: string, events: number): Map<string, number> {
  const p = JSON.parse(readFileSync(file, "utf8")) as {
    nodes: Array<{
      id: number;
      callFrame: { functionName: string; url: string; lineNumber: number };
    }>;
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const f = byId.get(id)!.callFrame;
    const key = `${f.functionName || "(anon)"} ${f.url.replace(/^.*node_modules\//, "").replace(/^.*wt-audit\//, "")}:${f.lineNumber + 1}`;
    out.set(key, (out.get(key) ?? 0) + (p.timeDeltas[i] ?? 0) / events);
  });
  return out;
}

async function one(round: number, audit: boolean) {
  const label = `round ${round} audit ${audit ? "on " : "off"}`;
  const dir = join(work, `r${round}-${audit ? "on" : "off"}`);
  mkdirSync(dir, { recursive: true });
  const db = await createDatabase(`ab_${audit ? "on" : "off"}`);
  const admin = new pg.Client(BASE_URL);
  await admin.connect();
  await admin.query(`ALTER DATABASE ${db} SET track_functions = 'pl'`);
  await admin.end();
  const slice = (phase: string, count: number) => {
    const file = join(dir, `${phase}.requests`);
    writeSignedSlice(file, phaseIds(`ab${round}${audit ? "on" : "off"}_${phase}`, count, false));
    return file;
  };
  const server = await startHookinboxPostgres(
    dir,
    databaseUrl(db, { schema: "hookinbox" }),
    profile,
    audit ? {} : { audit: { enabled: false } },
  );
  try {
    await saturate("wrk", server.target, slice("warm", 20_000), 2);
    const before = await dbStats(db);
    const machine = cpuWindow(server.pid);
    const procs = processCpuWindow(db);
    const r = pacedAt
      ? await paced(server.target, slice("sat", pacedAt * 6), pacedAt)
      : await saturate("wrk", server.target, slice("sat", 60_000), 6);
    const m = machine();
    const p = procs();
    const after = await dbStats(db);
    const events = after.events - before.events;
    const perEvent = (pct: number, seconds: number) => (pct * seconds * 1e4) / events; // µs
    console.log(
      `${label}: ${Math.round(r.rps)} req/s; per event: gateway ${perEvent(m.serverPct, m.seconds).toFixed(0)} µs, ` +
        `PostgreSQL ${perEvent(p.pgOursPct + p.pgAuxPct, p.seconds).toFixed(0)} µs (backends ${perEvent(p.pgOursPct, p.seconds).toFixed(0)}); ` +
        `events/commit ${(events / (after.commits - before.commits)).toFixed(1)}; others ${(p.foreignPct + p.pgOtherDbPct).toFixed(0)}% of a core`,
    );
  } finally {
    await server.stop();
  }
  const totalEvents = (await dbStats(db)).events;
  const fns = await functionTimes(db);
  for (const f of fns)
    console.log(
      `  ${f.funcname}: ${f.calls} calls, ${((f.total_ms * 1000) / Math.max(1, f.calls)).toFixed(0)} µs/call, self ${f.self_ms} ms of ${f.total_ms} ms`,
    );
  if (profile) {
    const prof = readdirSync(join(dir, "profile")).find((f) => f.endsWith(".cpuprofile"));
    if (prof) {
      const file = join(dir, "profile", prof);
      selfPerEvent.set(`audit ${audit ? "on" : "off"}`, selfByFunction(file, totalEvents));
      const inc = inclusive(file, [
        "auditLeafValues",
        "leafFieldsOf",
        "encodeFirstReceiptLeaf",
        "byteaArrayParam",
        "runAcceptBatch",
        "prepareValue",
        "escapeElement",
      ]);
      console.log(
        "  inclusive ms:",
        [...inc].map(([k, v]) => `${k} ${(v / 1000).toFixed(0)}`).join(", "),
      );
    }
  }
  await dropDatabase(db);
}

for (let round = 1; round <= rounds; round++) {
  selfPerEvent.clear();
  for (const audit of [true, false]) await one(round, audit);
  if (profile) {
    const runs = [...selfPerEvent.keys()];
    const keys = new Set(runs.flatMap((r) => [...selfPerEvent.get(r)!.keys()]));
    const rows = [...keys].map((k) => ({
      k,
      v: runs.map((r) => selfPerEvent.get(r)!.get(k) ?? 0),
    }));
    rows.sort(
      (a, b) => Math.max(...b.v) - Math.min(...b.v) - (Math.max(...a.v) - Math.min(...a.v)),
    );
    console.log(`self µs per event: ${runs.join(" | ")}`);
    const totals = runs.map((_, i) =>
      rows.reduce((n, r) => n + (r.k.startsWith("(idle)") ? 0 : r.v[i]!), 0),
    );
    console.log(`  busy total: ${totals.map((t) => t.toFixed(1)).join(" | ")}`);
    for (const r of rows.slice(0, 30))
      console.log(`  ${r.v.map((x) => x.toFixed(1).padStart(6)).join(" ")}  ${r.k}`);
  }
}
