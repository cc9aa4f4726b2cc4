// The PostgreSQL server under the bench: its URL, a fresh database per scenario, its settings,
// and the CPU its processes use (it runs on this machine and shares the 2 cores).
import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";

/** DATABASE_URL when set, else the machine's own server (trust auth). */
export const BASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** `BASE_URL` pointed at database `name`, with extra query parameters (e.g. schema). */
export function databaseUrl(name: string, params: Record<string, string> = {}): string {
  const url = new URL(BASE_URL);
  url.pathname = `/${name}`;
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: BASE_URL, application_name: "hookinbox-bench" });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

let counter = 0;
/** Creates a fresh database (`hookinbox_bench_<pid>_<n>`), returns its name. */
export async function createDatabase(tag: string): Promise<string> {
  const name = `hookinbox_bench_${process.pid}_${++counter}_${tag}`.slice(0, 63);
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  return name;
}

/** Drops a database made by createDatabase, ending any session still connected to it. */
export async function dropDatabase(name: string): Promise<void> {
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/** The settings that decide what a commit costs, read with SHOW (never changed here). */
export async function serverSettings(): Promise<Record<string, string>> {
  const names = [
    "server_version",
    "fsync",
    "synchronous_commit",
    "wal_sync_method",
    "full_page_writes",
    "commit_delay",
    "shared_buffers",
    "max_wal_size",
    "autovacuum",
    "max_connections",
  ];
  return withAdmin(async (c) => {
    const out: Record<string, string> = {};
    for (const n of names) out[n] = String(Object.values((await c.query(`SHOW ${n}`)).rows[0])[0]);
    const dir = (await c.query("SHOW data_directory").catch(() => null))?.rows[0]?.data_directory;
    if (dir) out.data_directory = dir;
    return out;
  });
}

/**
 * Untimed, before every timed phase, for every system alike. This server runs with autovacuum
 * off, so nothing would ever ANALYZE the freshly loaded tables and the planner would plan claims
 * against tables it has never measured. So: ANALYZE exactly the tables autovacuum's analyze
 * would pick (rows changed since the last analyze > 50 + 10% of the table: its default
 * autovacuum_analyze_threshold and scale factor), then CHECKPOINT, so no phase inherits the
 * previous one's dirty buffers or starts halfway to a checkpoint. Tables that are still empty
 * (hookinbox's attempts) stay unanalyzed, as they would with autovacuum on. Returns their names.
 */
export async function settle(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url, application_name: "hookinbox-bench" });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT format('%I.%I', s.schemaname, s.relname) AS name
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
       WHERE s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)`,
    );
    for (const { name } of rows) await client.query(`ANALYZE ${name}`);
    await client.query("CHECKPOINT");
    return rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}

/** utime + stime in clock ticks (1/100 s), parent pid and command name, for one pid. */
function readProc(pid: string): { ticks: number; ppid: number; comm: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const fields = stat.slice(close + 2).split(" ");
    return { ticks: Number(fields[11]) + Number(fields[12]), ppid: Number(fields[1]), comm };
  } catch {
    return null;
  }
}

function title(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

type Kind = "ours" | "aux" | "otherDb" | "bench" | "foreign" | "kernel";

export interface ProcessCpu {
  readonly seconds: number;
  /** PostgreSQL backends connected to the bench's database (this scenario's work), % of a core. */
  readonly pgOursPct: number;
  /** PostgreSQL's own processes: walwriter, checkpointer, background writer, postmaster … */
  readonly pgAuxPct: number;
  /** PostgreSQL backends of other databases (someone else's tests on the same server). */
  readonly pgOtherDbPct: number;
  /** Processes that are neither this bench (it, its children) nor PostgreSQL: other people's work. */
  readonly foreignPct: number;
}

/**
 * Starts a CPU window over every process of the machine, by what it is: PostgreSQL backends of
 * `database` (by their process title), other PostgreSQL backends, PostgreSQL's own processes,
 * this bench (this process and its children: server, worker, load generator), and the rest
 * ("foreign": other sessions' tests, compilers …; kernel threads apart). /proc is rescanned every
 * 200 ms so short-lived processes count too; one that ends between scans loses at most its last
 * 200 ms.
 */
export function processCpuWindow(database: string): () => ProcessCpu {
  const start = new Map<string, number>(); // ticks at window start (0 if born later)
  const seen = new Map<string, { ticks: number; kind: Kind }>();
  const benchPids = new Set<number>([process.pid]);
  let first = true;
  const classify = (pid: string, proc: { ppid: number; comm: string }): Kind => {
    if (proc.comm === "postgres") {
      const t = title(pid);
      // A client backend's title: "postgres: 15/main: <user> <database> <host>(<port>) <state>".
      const backend = /^postgres: \S+: \S+ \S+ (\S+\(\d+\)|\[local\])/.test(t);
      return !backend ? "aux" : t.includes(` ${database} `) ? "ours" : "otherDb";
    }
    if (benchPids.has(Number(pid)) || benchPids.has(proc.ppid)) {
      benchPids.add(Number(pid));
      return "bench";
    }
    return proc.ppid === 2 || pid === "2" ? "kernel" : "foreign";
  };
  const scan = () => {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      const proc = readProc(pid);
      if (!proc) continue;
      let entry = seen.get(pid);
      if (!entry) {
        entry = { ticks: proc.ticks, kind: classify(pid, proc) };
        seen.set(pid, entry);
        start.set(pid, first ? proc.ticks : 0);
      }
      entry.ticks = proc.ticks;
    }
    first = false;
  };
  scan();
  const t0 = performance.now();
  const timer = setInterval(scan, 200);
  return () => {
    clearInterval(timer);
    scan();
    const seconds = (performance.now() - t0) / 1000;
    const sum: Record<Kind, number> = {
      ours: 0,
      aux: 0,
      otherDb: 0,
      bench: 0,
      foreign: 0,
      kernel: 0,
    };
    for (const [pid, e] of seen) sum[e.kind] += e.ticks - (start.get(pid) ?? 0);
    return {
      seconds,
      pgOursPct: sum.ours / seconds,
      pgAuxPct: sum.aux / seconds,
      pgOtherDbPct: sum.otherDb / seconds,
      foreignPct: sum.foreign / seconds,
    };
  };
}
