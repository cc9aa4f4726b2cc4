// Child of bench/postgres.ts: one hookinbox burn-down on PostgreSQL.
//
//   node ./bin/run-ts.mjs bench/postgres/hookinbox-burndown.ts <store url> <events> <keys> <concurrency> [profile]
//
// 1. Preload (untimed): `events` unique Stripe invoice.paid events (~2 KB bodies, the ingest
//    bench's body) through store.accept with `targets: ["stripe:*"]`, 500 accepts in flight at a
//    time: the same accept statement ingest runs (event, receipt, delivery, NOTIFY). keys = 0:
//    orderingKey and version null; keys = n: orderingKey = one of n customers (seeded uniform,
//    the sequence bench/queue-burndown.ts uses), version = arrival number.
// 2. settle(): ANALYZE of the tables autovacuum would analyze, then CHECKPOINT (untimed, as
//    for graphile-worker; see db.ts).
// 3. Timed: inbox.startWorker({ concurrency }) with a no-op handler, until worker.idle() (every
//    completion committed). The rate is events / (last completion − first handler start); the
//    parent is told when the timed part starts and ends (it watches PostgreSQL's CPU meanwhile).
// 4. Checks (untimed): every delivery done with one attempt; with keys, each key's handler calls
//    in increasing version order and never two at once.
// [profile]: a .cpuprofile path; the V8 CPU profiler (the one behind --cpu-prof) runs during the
// timed part only, through node:inspector, so the preload does not dilute it.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import pg from "pg";
import { createInbox } from "../../src/inbox.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { STRIPE_SECRET } from "../ingest/requests.ts";
import { emitResult, preloadBurndown, sampleRss } from "../queue-events.ts";
import { orderCheck, tell } from "./child.ts";
import { settle } from "./db.ts";

const [url = "", eventsArg = "20000", keysArg = "0", concurrencyArg = "10", profile] =
  process.argv.slice(2);
if (!url) throw new Error("usage: hookinbox-burndown.ts <store url> <events> <keys> <concurrency>");
const events = Number(eventsArg);
const keys = Number(keysArg);
const concurrency = Number(concurrencyArg);
const TARGET = "stripe:*";

const check = orderCheck();
let calls = 0;
let firstStart = 0;
const store = openPostgresStore(url);
// How the worker batches its claims: calls, and deliveries asked for and leased per call.
const claims = { calls: 0, asked: 0, leased: 0, empty: 0 };
const claimDeliveries = store.claimDeliveries.bind(store);
store.claimDeliveries = async (input) => {
  const leased = await claimDeliveries(input);
  claims.calls++;
  claims.asked += input.limit;
  claims.leased += leased.length;
  if (leased.length === 0) claims.empty++;
  return leased;
};
const inbox = createInbox(
  {
    sources: { stripe: { provider: "stripe", secrets: [STRIPE_SECRET] } },
    handlers: {
      [TARGET]: async (event: { orderingKey: string | null; version: number | null }) => {
        if (calls++ === 0) firstStart = performance.now();
        check.start(event.orderingKey, event.version);
        check.end(event.orderingKey);
      },
    },
  },
  { env: {}, store },
);
await inbox.ready();
// Experiments only (bench/postgres/hotspots.ts; bench:postgres never sets it): SQL run on the
// bench's own database after migration, e.g. a changed queue function, to measure a what-if.
if (process.env.BENCH_EXPERIMENT_SQL) {
  const client = new pg.Client({ connectionString: url.replace(/[?&]schema=[^&]*/, "") });
  await client.connect();
  await client.query(`SET search_path TO ${store.schema}`);
  await client.query(process.env.BENCH_EXPERIMENT_SQL);
  await client.end();
}

// ---- preload (untimed) ----
const preloadStarted = performance.now();
await preloadBurndown(store, { events: events, keys: keys, target: TARGET });
const preloadMs = performance.now() - preloadStarted;
await settle(url);
Object.assign(claims, { calls: 0, asked: 0, leased: 0, empty: 0 });
const session = profile ? new Session() : null;
if (session) {
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
}

// ---- burn-down (timed) ----
tell({ phase: "start" });
const rss = sampleRss();
const cpu0 = process.cpuUsage();
const started = performance.now();
const worker = inbox.startWorker({ concurrency });
await worker.idle();
const ended = performance.now();
tell({ phase: "end" });
const cpu = process.cpuUsage(cpu0);
const memory = rss.stop();
const stats = worker.stats();
if (session && profile) {
  const { profile: cpuProfile } = await session.post("Profiler.stop");
  writeFileSync(profile, JSON.stringify(cpuProfile));
  session.disconnect();
}
await inbox.close();

// ---- checks (untimed) ----
const client = new pg.Client({ connectionString: url.replace(/[?&]schema=[^&]*/, "") });
await client.connect();
await client.query(`SET search_path TO ${store.schema}`);
const count = async (sql: string) => Number((await client.query(sql)).rows[0].n);
const done = await count("SELECT count(*) AS n FROM deliveries WHERE status = 'done'");
const deliveries = await count("SELECT count(*) AS n FROM deliveries");
const attempts = await count("SELECT count(*) AS n FROM attempts");
const distinctKeys = await count(
  "SELECT count(DISTINCT ordering_key) AS n FROM deliveries WHERE ordering_key IS NOT NULL",
);
await client.end();

const seconds = (ended - firstStart) / 1000;
emitResult({
  system: "hookinbox",
  events,
  keys,
  distinctKeys,
  concurrency,
  preloadMs,
  startupMs: firstStart - started,
  seconds,
  perSecond: done / seconds,
  cpuPct: (100 * (cpu.user + cpu.system)) / 1e6 / ((ended - started) / 1000),
  rss: { startMb: rss.startMb, ...memory },
  claims,
  done,
  deliveries,
  attempts,
  calls,
  orderViolations: check.orderViolations,
  overlaps: check.overlaps,
  stats,
  pass:
    done === events &&
    deliveries === events &&
    attempts === events &&
    calls === events &&
    check.orderViolations === 0 &&
    check.overlaps === 0,
});
