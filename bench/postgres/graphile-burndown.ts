// Child of bench/postgres.ts: one graphile-worker burn-down on the same PostgreSQL.
//
//   node ./bin/run-ts.mjs bench/postgres/graphile-burndown.ts <db url> <jobs> <keys> <concurrency> <mode> <payload>
//
// mode    default: run({ concurrency }) and graphile-worker's defaults for everything else
//                  (maxPoolSize 10, pollInterval 2000, no local queue, no completion batching).
//         fast:    its documented high-throughput settings (worker.graphile.org/docs/performance,
//                  "Batching"): preset.worker.localQueue = { size: 500 },
//                  completeJobBatchDelay = 0, failJobBatchDelay = 0, maxPoolSize = concurrency + 1.
// payload 2kb:  { k, v, event } where event is the same ~2 KB Stripe invoice.paid object the
//               hookinbox burn-down stores, so both hand their handler the same bytes;
//         tiny: { k, v } only.
//
// 1. Preload (untimed): utils.addJobs in batches of 1,000, runAt 1 ms apart in increasing order
//    (all in the past, so all due). keys = 0: no queue name; keys = n:
//    queueName = one of n names drawn with the same seeded sequence as hookinbox's ordering keys
//    (a named queue runs its jobs one at a time, by priority then run_at: the closest equivalent).
// 2. settle(): ANALYZE of the tables autovacuum would analyze, then CHECKPOINT (untimed, as
//    for hookinbox; see db.ts).
// 3. Timed: run(...) with a no-op task until every job's completion is committed. graphile-worker
//    0.18 does not wait for completeJob before taking the next job, so "done" is the moment its
//    jobs table is empty: once the task has run `jobs` times, a separate connection polls
//    `count(*)` every 2 ms. Rate = jobs / (that moment − first task start).
// 4. Checks: every job ran once, no errors, table empty; with keys, each queue's jobs in
//    increasing version order and never two at once.
import { Logger, makeWorkerUtils, run } from "graphile-worker";
import pg from "pg";
import { emitResult, plainBody, sampleRss } from "../queue-events.ts";
import { graphilePreset, orderCheck, seededRandom, tell } from "./child.ts";
import { settle } from "./db.ts";

const [
  url = "",
  jobsArg = "20000",
  keysArg = "0",
  concurrencyArg = "10",
  mode = "default",
  payloadKind = "2kb",
] = process.argv.slice(2);
if (!url)
  throw new Error(
    "usage: graphile-burndown.ts <db url> <jobs> <keys> <concurrency> <mode> <payload>",
  );
const jobs = Number(jobsArg);
const keys = Number(keysArg);
const concurrency = Number(concurrencyArg);
const silent = new Logger(() => () => undefined);

// ---- preload (untimed) ----
const utils = await makeWorkerUtils({ connectionString: url, logger: silent });
await utils.migrate();
const random = seededRandom();
const event = JSON.parse(plainBody("evt_burn_0").toString("utf8"));
const preloadStarted = performance.now();
const BATCH = 1_000;
const base = Date.now() - jobs - 60_000; // every job due before the burn-down starts
const queues = new Set<string>();
for (let from = 0; from < jobs; from += BATCH) {
  const specs = [];
  for (let i = from; i < Math.min(jobs, from + BATCH); i++) {
    const k = keys > 0 ? `q_${Math.floor(random() * keys)}` : null;
    if (k) queues.add(k);
    const payload =
      payloadKind === "tiny"
        ? { k, v: i + 1 }
        : { k, v: i + 1, event: { ...event, id: `evt_burn_${i}` } };
    // run_at increases with the version, as it does when events are added one by one over time
    // (one addJobs batch would otherwise give them all the same run_at, and graphile-worker
    // orders a queue's jobs by priority, run_at only).
    const runAt = new Date(base + i);
    specs.push({ identifier: "noop", payload, runAt, ...(k ? { queueName: k } : {}) });
  }
  await utils.addJobs(specs);
}
const preloadMs = performance.now() - preloadStarted;
await settle(url);

// ---- burn-down (timed) ----
const check = orderCheck();
let calls = 0;
let errors = 0;
let firstStart = 0;
let allRan: () => void = () => undefined;
const ran = new Promise<void>((resolve) => {
  allRan = resolve;
});
const poller = new pg.Client({ connectionString: url, application_name: "bench-poller" });
await poller.connect();

tell({ phase: "start" });
const rss = sampleRss();
const cpu0 = process.cpuUsage();
const started = performance.now();
const runner = await run({
  connectionString: url,
  concurrency,
  noHandleSignals: true,
  logger: silent,
  preset: graphilePreset(mode, concurrency),
  taskList: {
    noop: async (payload) => {
      if (calls++ === 0) firstStart = performance.now();
      const { k, v } = payload as { k: string | null; v: number };
      check.start(k, v);
      check.end(k);
      if (calls === jobs) allRan();
    },
  },
});
runner.events.on("job:error", () => {
  errors++;
});
await ran;
let left = -1;
for (const deadline = performance.now() + 60_000; performance.now() < deadline; ) {
  left = Number(
    (await poller.query("SELECT count(*) AS n FROM graphile_worker._private_jobs")).rows[0].n,
  );
  if (left === 0) break;
  await new Promise((resolve) => setTimeout(resolve, 2));
}
const ended = performance.now();
tell({ phase: "end" });
const cpu = process.cpuUsage(cpu0);
const memory = rss.stop();
await runner.stop();
await poller.end();
await utils.release();

const seconds = (ended - firstStart) / 1000;
emitResult({
  system: "graphile-worker",
  mode,
  payload: payloadKind,
  events: jobs,
  keys,
  distinctKeys: queues.size,
  concurrency,
  preloadMs,
  startupMs: firstStart - started,
  seconds,
  perSecond: jobs / seconds,
  cpuPct: (100 * (cpu.user + cpu.system)) / 1e6 / ((ended - started) / 1000),
  rss: { startMb: rss.startMb, ...memory },
  done: left === 0 ? jobs : jobs - left,
  calls,
  errors,
  orderViolations: check.orderViolations,
  overlaps: check.overlaps,
  pass:
    left === 0 &&
    calls === jobs &&
    errors === 0 &&
    check.orderViolations === 0 &&
    check.overlaps === 0,
});
