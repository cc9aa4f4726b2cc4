// Shared helpers of the processing bench (bench/queue.ts and its child processes).
import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import type { AcceptInput, Store } from "../src/store/types.ts";
import { bodyTemplate, STRIPE_SECRET } from "./ingest/requests.ts";

/** The invoice id inside bench/requests.ts's body template (Stripe's ordering key: data.object.id). */
const TEMPLATE_INVOICE = "in_1PbenchInvoice0000000001";

/** One pre-signed Stripe `invoice.paid` request (~2 KB), signed exactly as Stripe signs. */
export interface SignedEvent {
  readonly id: string;
  readonly body: Buffer;
  readonly signature: string;
}

/**
 * `count` pre-signed events `evt_<tag>_<i>`, each about its own invoice (so each has its own
 * ordering key under the Stripe preset, `data.object.id`). Signing happens here, before any
 * timing starts.
 */
export function signedEvents(tag: string, count: number): SignedEvent[] {
  const ts = Math.floor(Date.now() / 1000);
  const { prefix, suffix } = bodyTemplate(ts);
  const at = suffix.indexOf(TEMPLATE_INVOICE);
  if (at < 0) throw new Error("bench/requests.ts body template changed: invoice id not found");
  return Array.from({ length: count }, (_, i) => {
    const id = `evt_${tag}_${i}`;
    const body = `${prefix}${id}${suffix.slice(0, at)}in_${tag}_${i}${suffix.slice(at + TEMPLATE_INVOICE.length)}`;
    const mac = createHmac("sha256", STRIPE_SECRET).update(`${ts}.${body}`).digest("hex");
    return { id, body: Buffer.from(body), signature: `t=${ts},v1=${mac}` };
  });
}

/** The ~2 KB body of bench/requests.ts for event `id` (burn-down preload: not verified). */
export function plainBody(id: string): Buffer {
  const { prefix, suffix } = bodyTemplate(Math.floor(Date.now() / 1000));
  return Buffer.from(`${prefix}${id}${suffix}`);
}

/** Nearest-rank percentiles of `values` (ms). */
export function percentiles(values: readonly number[]): {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
} {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return {
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: sorted[sorted.length - 1]!,
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}

/** process.memoryUsage().rss sampled every 100 ms, in MB. */
export function sampleRss(): { startMb: number; stop(): { endMb: number; peakMb: number } } {
  const mb = () => process.memoryUsage().rss / 2 ** 20;
  const startMb = mb();
  let peakMb = startMb;
  const timer = setInterval(() => {
    peakMb = Math.max(peakMb, mb());
  }, 100);
  return {
    startMb,
    stop() {
      clearInterval(timer);
      const endMb = mb();
      return { endMb, peakMb: Math.max(peakMb, endMb) };
    },
  };
}

/** Child processes print their result as one `QUEUE_RESULT {json}` line on stdout. */
export const RESULT_PREFIX = "QUEUE_RESULT ";

export function emitResult(result: unknown): void {
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

export function parseResult<T>(stdout: string): T {
  const line = stdout.split("\n").find((l) => l.startsWith(RESULT_PREFIX));
  if (!line) throw new Error(`no ${RESULT_PREFIX.trim()} line in child output:\n${stdout}`);
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as T;
}

/**
 * The disk's floor for one durable SQLite commit right now: `n` one-row transactions with the
 * store's settings (WAL, `synchronous = FULL`) into a WAL that was grown and checkpointed first,
 * so commits overwrite WAL space as in steady state (a growing WAL also journals its new size,
 * which costs more). Other processes' fsyncs on the same disk show up here first, so it is
 * measured right before every run. Median and p90 in ms.
 */
export function durableCommitMs(dir: string, n = 300): { p50: number; p90: number } {
  const file = join(dir, "commit-floor.db");
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, pad BLOB)");
    db.exec("BEGIN IMMEDIATE");
    db.exec(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500) " +
        "INSERT INTO t (at, pad) SELECT i, randomblob(4000) FROM n",
    );
    db.exec("COMMIT");
    db.pragma("wal_checkpoint(RESTART)");
    const insert = db.prepare("INSERT INTO t (at) VALUES (?)");
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      db.exec("BEGIN IMMEDIATE");
      insert.run(i);
      db.exec("COMMIT");
      times.push(performance.now() - t0);
    }
    const { p50, p90 } = percentiles(times);
    return { p50, p90 };
  } finally {
    db.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
  }
}

/** The repository root (bench/ is one level down). */
export const repoRoot = fileURLToPath(new URL("..", import.meta.url));

/** Runs a TypeScript file in its own Node process (bin/run-ts.mjs); resolves with its stdout. */
export function runTs(script: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(repoRoot, "bin/run-ts.mjs"), join(repoRoot, script), ...args],
      { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString();
    });
    child.once("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${script} exited ${code}: ${err}${out}`)),
    );
  });
}

/** Busy CPU time of the whole machine (all but idle and iowait), in clock ticks (1/100 s). */
function machineTicks(): number {
  const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/);
  const n = ticks.map(Number);
  return n.reduce((a, b) => a + b, 0) - (n[3] ?? 0) - (n[4] ?? 0);
}

/** CPU the machine uses over `ms` while no bench process runs (% of one core). */
export async function backgroundCpu(ms = 1000): Promise<number> {
  const [m0, t0] = [machineTicks(), performance.now()];
  await new Promise((resolve) => setTimeout(resolve, ms));
  return (machineTicks() - m0) / ((performance.now() - t0) / 1000);
}

/** A deterministic random sequence (mulberry32): the same ordering keys every run. */
export function seededRandom(): () => number {
  let seed = 0x9e3779b9;
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Stores `events` Stripe-shaped events routed to `target` through the store's own accept, 500
 * at a time (untimed preload of the burn-downs); with `keys` > 0 each gets one of `keys`
 * ordering keys and an increasing version.
 */
export async function preloadBurndown(
  store: Pick<Store, "accept">,
  options: { events: number; keys: number; target: string },
): Promise<void> {
  const random = seededRandom();
  const ts = Math.floor(Date.now() / 1000);
  const CHUNK = 500;
  for (let from = 0; from < options.events; from += CHUNK) {
    const batch: Promise<unknown>[] = [];
    for (let i = from; i < Math.min(options.events, from + CHUNK); i++) {
      const id = `evt_burn_${i}`;
      const body = plainBody(id);
      const input: AcceptInput = {
        source: "stripe",
        identity: {
          dedupKey: id,
          type: "invoice.paid",
          occurredAt: ts * 1000,
          orderingKey: options.keys > 0 ? `cus_${Math.floor(random() * options.keys)}` : null,
          version: options.keys > 0 ? i + 1 : null,
        },
        body,
        headers: [
          ["Host", "127.0.0.1"],
          ["Content-Type", "application/json; charset=utf-8"],
          ["Stripe-Signature", `t=${ts},v1=${"0".repeat(64)}`],
          ["Content-Length", String(body.byteLength)],
        ],
        receivedAt: Date.now(),
        remoteAddress: "127.0.0.1",
        secretIndex: 0,
        targets: [options.target],
      };
      batch.push(store.accept(input));
    }
    await Promise.all(batch);
  }
}
