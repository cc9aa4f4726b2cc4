// Child process of bench/queue.ts: one burn-down.
//
//   node ./bin/run-ts.mjs bench/queue-burndown.ts <dir> <events> <keys> <concurrency> <log> [profile]
//
// <log>: "silent" (the library's default) or "info" (what `hookinbox start` logs, to /dev/null).
// [profile]: a .cpuprofile path; the V8 profiler (node:inspector) then runs during the timed
// burn-down only, so the preload does not dilute it.
//
// 1. Preload (untimed): `events` unique Stripe invoice.paid events (~2 KB bodies) go straight
//    into store.accept with `targets: ["stripe:*"]`, 500 concurrent accepts per group commit.
//    This is the same accept (same rows, same delivery insert, same commit) ingest runs after
//    verifying a request; skipping HTTP and HMAC here only makes the preload fast, and lets the
//    bench set ordering keys and versions exactly. keys = 0: orderingKey and version null;
//    keys = n: orderingKey = one of n customers (seeded uniform), version = arrival number.
// 2. Timed: inbox.startWorker({ concurrency }) with a no-op handler, until worker.idle().
//    RSS (process.memoryUsage().rss) is sampled every 100 ms while it runs.
// 3. Checks (untimed): every delivery done with exactly one attempt; with keys, each key's
//    handler calls came in increasing version order.
import { createWriteStream, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createInbox } from "../src/inbox.ts";
import { createLogger } from "../src/log.ts";
import { openSqliteStore } from "../src/store/sqlite/store.ts";
import { STRIPE_SECRET } from "./ingest/requests.ts";
import { emitResult, preloadBurndown, sampleRss } from "./queue-events.ts";

const [
  dir = "",
  eventsArg = "20000",
  keysArg = "0",
  concurrencyArg = "10",
  log = "silent",
  profile,
] = process.argv.slice(2);
const events = Number(eventsArg);
const keys = Number(keysArg);
const concurrency = Number(concurrencyArg);
if (!dir) throw new Error("usage: queue-burndown.ts <dir> <events> <keys> <concurrency> <log>");

const TARGET = "stripe:*";
const lastVersion = new Map<string, number>();
let calls = 0;
let orderViolations = 0;

// Time spent in `COMMIT` itself (WAL write + fsync; better-sqlite3 blocks the event loop for it),
// measured by wrapping Database#exec in this process only.
let commitExecMs = 0;
const exec = Database.prototype.exec;
Database.prototype.exec = function (this: Database.Database, sql: string) {
  if (sql !== "COMMIT") return exec.call(this, sql);
  const t0 = performance.now();
  try {
    return exec.call(this, sql);
  } finally {
    commitExecMs += performance.now() - t0;
  }
};

// Every COMMIT's duration (BEGIN → COMMIT returned, fsync included), to split the burn-down's
// time between transactions (SQLite work + fsync, which blocks the event loop) and the rest.
let commitMs = 0;
let commitCount = 0;
const store = openSqliteStore({
  path: join(dir, "hookinbox.db"),
  onCommit: ({ durationMs }) => {
    commitMs += durationMs;
    commitCount++;
  },
});
// How the worker batches its claims: calls, and deliveries asked for (limit) and leased per call.
const claims = { calls: 0, asked: 0, leased: 0, empty: 0, limitOne: 0 };
const claimDeliveries = store.claimDeliveries.bind(store);
store.claimDeliveries = async (input) => {
  const leased = await claimDeliveries(input);
  claims.calls++;
  claims.asked += input.limit;
  claims.leased += leased.length;
  if (leased.length === 0) claims.empty++;
  if (input.limit === 1) claims.limitOne++;
  return leased;
};
const inbox = createInbox(
  {
    sources: { stripe: { provider: "stripe", secrets: [STRIPE_SECRET] } },
    handlers: {
      [TARGET]: async (event: { orderingKey: string | null; version: number | null }) => {
        calls++;
        if (event.orderingKey !== null && event.version !== null) {
          const last = lastVersion.get(event.orderingKey) ?? Number.NEGATIVE_INFINITY;
          if (event.version <= last) orderViolations++;
          lastVersion.set(event.orderingKey, event.version);
        }
      },
    },
  },
  {
    env: {},
    store,
    // "info" = what `hookinbox start` logs (a JSON line per delivery), written to /dev/null;
    // "silent" = the library's default.
    ...(log === "info"
      ? {
          logger: createLogger({ destination: createWriteStream("/dev/null") }),
        }
      : {}),
  },
);
await inbox.ready();

// ---- preload (untimed) ----
const preloadStarted = performance.now();
await preloadBurndown(store, { events: events, keys: keys, target: TARGET });
const preloadMs = performance.now() - preloadStarted;
const commitsBefore = store.stats().commits;
[commitMs, commitCount, commitExecMs] = [0, 0, 0];
Object.assign(claims, { calls: 0, asked: 0, leased: 0, empty: 0, limitOne: 0 });
const session = profile ? new Session() : null;
if (session) {
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
}

// ---- burn-down (timed) ----
/** Bytes this process caused to be written to storage so far (WAL appends, checkpoints). */
const writeBytes = () =>
  Number(/^write_bytes:\s*(\d+)/m.exec(readFileSync("/proc/self/io", "utf8"))?.[1] ?? Number.NaN);
const written0 = writeBytes();
const rss = sampleRss();
const cpu0 = process.cpuUsage();
const started = performance.now();
const worker = inbox.startWorker({ concurrency });
await worker.idle();
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpu0);
const writtenMb = (writeBytes() - written0) / 2 ** 20;
const memory = rss.stop();
const stats = worker.stats();
const commits = store.stats().commits - commitsBefore;
const inCommits = { count: commitCount, ms: commitMs, commitExecMs };
if (session && profile) {
  const { profile: cpuProfile } = await session.post("Profiler.stop");
  writeFileSync(profile, JSON.stringify(cpuProfile));
  session.disconnect();
}
await inbox.close();

// ---- checks (untimed) ----
const db = new Database(join(dir, "hookinbox.db"), { readonly: true });
const count = (sql: string) => db.prepare<[], number>(sql).pluck().get() ?? 0;
const done = count("SELECT count(*) FROM deliveries WHERE status = 'done'");
const deliveries = count("SELECT count(*) FROM deliveries");
const attempts = count("SELECT count(*) FROM attempts");
const distinctKeys = count(
  "SELECT count(DISTINCT ordering_key) FROM deliveries WHERE ordering_key IS NOT NULL",
);
db.close();

emitResult({
  events,
  keys,
  distinctKeys,
  concurrency,
  log,
  preloadMs,
  seconds,
  perSecond: done / seconds,
  cpuPct: (100 * (cpu.user + cpu.system)) / 1e6 / seconds,
  rss: { startMb: rss.startMb, ...memory },
  commits,
  commitMs: inCommits.ms,
  commitExecMs: inCommits.commitExecMs,
  writtenMb,
  claims,
  done,
  deliveries,
  attempts,
  calls,
  orderViolations,
  stats,
  pass:
    done === events &&
    deliveries === events &&
    attempts === events &&
    calls === events &&
    orderViolations === 0,
});
