// npm run bench:forward [-- --events N] [-- --latency N] [-- --store sqlite|postgres|both]
//   [-- --profile]: the gateway under --cpu-prof; prints its commits per event (SQLite) during
//   the throughput phase and the hot spots of each thread's profile (bench/forward/profile.ts)
//   (--stores sqlite,postgres, the older spelling, still works)
//
// Forwarding (issue 11, "Benchmark"; issue 24, "delivering as fast as receiving"): hookinbox in
// front of an app, against posting the same pre-signed events straight to that app, and against
// the least a durable forwarder can do (bench/forward/durable-forwarder-stub.ts, on the same
// store), in one run per store. Every side runs in its own process: the destination
// (bench/forward/receiver.ts, a bare node:http server), the stub, the gateway (`hookinbox
// start`; the stub and the gateway one after the other, never at once), and this process as the
// client.
//
// Per store:
// 1. Throughput: N pre-signed ~2 KB Stripe events, 50 in flight on keep-alive connections.
//    - direct: POSTed to the destination; events/s from the first send to the last answer.
//    - stub, hookinbox: POSTed to the forwarder, which stores, answers, and forwards each to the
//      same destination (signed, with `x-bench-id`); events/s from the first send to the last
//      first arrival at the destination. Ratios hookinbox/stub, stub/direct and hookinbox/direct
//      (goal ≥ 0.8).
// 2. Latency: L events one at a time, each sent after the previous one arrived; latency = first
//    arrival at the destination minus the send, both process.hrtime.bigint() (CLOCK_MONOTONIC,
//    one clock for the machine). Direct, stub and hookinbox the same way; added = forwarder −
//    direct at p50 and p99; and hookinbox's added p50 over the stub's.
// 3. Each forwarder's peak RSS (VmHWM and polled VmRSS).
// 4. Checks, failing the run: every id a forwarder answered 200 arrived at the destination at
//    least once (the destination counts distinct ids; printed with the answers and the requests),
//    and every signed request of the latency runs carried a valid Standard Webhooks signature.
// PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), a fresh
// database per run (hookinbox's tables, the stub's in its own schema), dropped after.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { eventPoster } from "./forward/post-events.ts";
import { freePort, printCommits, printProfiles, scrapeCounts } from "./forward/profile.ts";
import { launch, type ServerUnderTest } from "./ingest/servers.ts";
import { createDatabase, databaseUrl, dropDatabase } from "./postgres/db.ts";
import { startHookinboxPostgres } from "./postgres/servers.ts";
import { backgroundCpu, percentiles, repoRoot, signedEvents } from "./queue-events.ts";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "20000" },
    latency: { type: "string", default: "500" },
    store: { type: "string", default: "both" },
    stores: { type: "string" },
    profile: { type: "boolean", default: false },
  },
});
const STORES = (
  values.stores ?? (values.store === "both" ? "sqlite,postgres" : values.store)
).split(",") as Array<"sqlite" | "postgres">;
if (STORES.some((s) => s !== "sqlite" && s !== "postgres"))
  throw new Error("--store: sqlite, postgres or both");
const EVENTS = Number(values.events);
const PROFILE = values.profile;
const LATENCY_EVENTS = Number(values.latency);
const IN_FLIGHT = 50;
const GOAL_RATIO = 0.8;
const DESTINATION_SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const work = mkdtempSync(join(tmpdir(), "hookinbox-bench-forward-"));

// ---- the destination process ----

interface Destination {
  readonly url: string;
  readonly child: ChildProcess;
  ask<T>(kind: string): Promise<T>;
  send(kind: string): void;
  onArrival(listener: ((id: string, at: bigint) => void) | null): void;
}

function startDestination(): Promise<Destination> {
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, "bin/run-ts.mjs"),
      join(repoRoot, "bench/forward/receiver.ts"),
      DESTINATION_SECRET,
    ],
    { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
  const waiting = new Map<string, Array<(message: unknown) => void>>();
  let arrival: ((id: string, at: bigint) => void) | null = null;
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`destination exited ${code}`)));
    child.on("message", (message: { kind: string; port?: number; id?: string; at?: string }) => {
      if (message.kind === "listening") {
        resolve({
          url: `http://127.0.0.1:${message.port}/hooks`,
          child,
          ask: <T>(kind: string) =>
            new Promise<T>((done) => {
              waiting.set(kind, [...(waiting.get(kind) ?? []), done as (m: unknown) => void]);
              child.send({ kind });
            }),
          send: (kind) => child.send({ kind }),
          onArrival: (listener) => {
            arrival = listener;
          },
        });
        return;
      }
      if (message.kind === "arrival") {
        arrival?.(message.id!, BigInt(message.at!));
        return;
      }
      waiting.get(message.kind)?.shift()?.(message);
    });
  });
}

// ---- the forwarders, each its own process ----

/** The least a durable forwarder can do, on `store` (`sqlite:<file>` or a PostgreSQL URL). */
function startStub(store: string, destinationUrl: string): Promise<ServerUnderTest> {
  const args = [
    join(repoRoot, "bin/run-ts.mjs"),
    join(repoRoot, "bench/forward/durable-forwarder-stub.ts"),
    store,
    destinationUrl,
    DESTINATION_SECRET,
  ];
  return launch(args, repoRoot, "/webhooks/stripe");
}

/** `hookinbox start` forwarding every `stripe` event to the destination (default logging). */
function startGateway(dir: string, store: string, destinationUrl: string, metricsPort: number) {
  return startHookinboxPostgres(dir, store, PROFILE, {
    ...(PROFILE ? { metrics: { port: metricsPort } } : {}),
    destinations: {
      app: {
        url: destinationUrl,
        secret: DESTINATION_SECRET,
        allowPrivateNetworks: true,
        forwardHeaders: ["x-bench-id"],
        concurrency: 50,
      },
    },
    routes: [{ from: "stripe", to: "app" }],
    worker: { concurrency: 50 },
  });
}

// ---- the client (this process) ----

const { post, postAllAcked, close: closePoster } = eventPoster(IN_FLIGHT);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** How long the destination may see no new arrival before the missing ids count as lost. */
const STALL_MS = 30_000;

/** What the destination got of the ids a forwarder answered 200. */
interface Delivery {
  /** Ids answered 200 (acknowledged). */
  acked: number;
  /** Distinct ids that arrived at the destination. */
  distinct: number;
  /** Requests that arrived (distinct + redeliveries). */
  requests: number;
  /** Acknowledged ids that never arrived. */
  missing: number;
  /** Signed requests checked (latency runs) and how many of them failed the check. */
  signatures: { checked: number; bad: number };
}

/**
 * Waits until every acknowledged id arrived at the destination (or nothing new arrived for
 * STALL_MS); returns the counts and the last first arrival of an acknowledged id.
 */
async function awaitDelivery(destination: Destination, acked: readonly string[], start: bigint) {
  let seen = -1;
  let progressAt = Date.now();
  for (;;) {
    const count = await destination.ask<{ distinct: number; requests: number }>("count");
    if (count.distinct !== seen) [seen, progressAt] = [count.distinct, Date.now()];
    if (count.distinct >= acked.length || Date.now() - progressAt > STALL_MS) {
      // Enough ids: now check that they are the acknowledged ones.
      const { items } = await destination.ask<{ items: Array<[string, string]> }>("arrivals");
      const at = new Map(items);
      const missing = acked.filter((id) => !at.has(id));
      if (missing.length === 0 || Date.now() - progressAt > STALL_MS) {
        const last = acked.reduce((max, id) => {
          const t = at.get(id);
          return t !== undefined && BigInt(t) > max ? BigInt(t) : max;
        }, start);
        const { checked, bad } = await destination.ask<{ checked: number; bad: number }>("count");
        const delivery: Delivery = {
          acked: acked.length,
          distinct: at.size,
          requests: count.requests,
          missing: missing.length,
          signatures: { checked, bad },
        };
        return { delivery, last };
      }
    }
    await sleep(50);
  }
}

/**
 * N events at IN_FLIGHT to `url`; events/s to the last answer (`direct`) or to the last first
 * arrival at the destination (a forwarder), and what arrived.
 */
async function throughput(destination: Destination, url: string, tag: string, direct: boolean) {
  destination.send("reset");
  const events = signedEvents(tag, EVENTS);
  const start = process.hrtime.bigint();
  const acked = await postAllAcked(url, events);
  const answered = process.hrtime.bigint();
  const { delivery, last } = await awaitDelivery(destination, acked, start);
  const seconds = (end: bigint) => Number(end - start) / 1e9;
  return {
    perSecond: EVENTS / seconds(direct ? answered : last),
    ackPerSecond: EVENTS / seconds(answered),
    non200: EVENTS - acked.length,
    delivery,
  };
}

/** One event at a time: send, wait for its first arrival; ms per event, and what arrived. */
async function latencies(destination: Destination, url: string, tag: string) {
  const events = signedEvents(tag, LATENCY_EVENTS);
  destination.send("reset");
  destination.send("push");
  const times: number[] = [];
  const acked: string[] = [];
  for (const event of events) {
    const arrived = new Promise<bigint | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), STALL_MS);
      destination.onArrival((id, at) => {
        if (id !== event.id) return;
        clearTimeout(timer);
        resolve(at);
      });
    });
    const sent = process.hrtime.bigint();
    const status = await post(url, event);
    if (status !== 200) throw new Error(`${url} answered ${status}`);
    acked.push(event.id);
    const at = await arrived;
    if (at === null) break; // lost: counted below
    times.push(Number(at - sent) / 1e6);
  }
  destination.onArrival(null);
  const { delivery } = await awaitDelivery(destination, acked, 0n);
  destination.send("reset");
  return { latency: percentiles(times.length > 0 ? times : [Number.NaN]), delivery };
}

type Latency = ReturnType<typeof percentiles>;

interface ForwarderResult {
  perSecond: number;
  ackPerSecond: number;
  non200: number;
  latency: Latency;
  addedP50: number;
  addedP99: number;
  delivered: { throughput: Delivery; latency: Delivery };
  rss: { startMb: number; peakMb: number };
}

/** Throughput then latency through one forwarder, then its memory; stops it. */
async function measure(
  destination: Destination,
  server: ServerUnderTest,
  tag: string,
  direct: Latency,
  metricsPort?: number,
): Promise<ForwarderResult> {
  try {
    const before = metricsPort ? await scrapeCounts(metricsPort) : null;
    const run = await throughput(destination, server.target, tag, false);
    if (metricsPort && before) printCommits(before, await scrapeCounts(metricsPort));
    const timed = await latencies(destination, server.target, `${tag}_latency`);
    return {
      perSecond: run.perSecond,
      ackPerSecond: run.ackPerSecond,
      non200: run.non200,
      latency: timed.latency,
      addedP50: timed.latency.p50 - direct.p50,
      addedP99: timed.latency.p99 - direct.p99,
      delivered: { throughput: run.delivery, latency: timed.delivery },
      rss: { startMb: server.memory.startMb, peakMb: server.memory.peakMb() },
    };
  } finally {
    await server.stop();
  }
}

interface StoreResult {
  store: string;
  direct: { perSecond: number; non200: number; latency: Latency; delivered: Delivery };
  stub: ForwarderResult;
  hookinbox: ForwarderResult;
  ratios: {
    hookinboxToStub: number;
    stubToDirect: number;
    hookinboxToDirect: number;
    addedP50HookinboxToStub: number;
  };
  background: number;
}

async function runStore(kind: "sqlite" | "postgres"): Promise<StoreResult> {
  const dir = mkdtempSync(join(work, `${kind}-`));
  const database = kind === "postgres" ? await createDatabase("forward") : null;
  const store = database ? databaseUrl(database) : `sqlite:${join(dir, "hookinbox.db")}`;
  // The stub: its own SQLite file, or its own schema in the same fresh database.
  const stubStore = database ? store : `sqlite:${join(dir, "forwarder-stub.db")}`;
  const background = await backgroundCpu();
  const destination = await startDestination();
  try {
    const direct = await throughput(destination, destination.url, `direct_${kind}`, true);
    const directLatency = await latencies(destination, destination.url, `direct_latency_${kind}`);
    const stub = await measure(
      destination,
      await startStub(stubStore, destination.url),
      `stub_${kind}`,
      directLatency.latency,
    );
    const metricsPort = PROFILE ? await freePort() : undefined;
    const hookinbox = await measure(
      destination,
      await startGateway(dir, store, destination.url, metricsPort ?? 0),
      `hookinbox_${kind}`,
      directLatency.latency,
      metricsPort,
    );
    if (PROFILE) printProfiles(join(dir, "profile"));
    return {
      store: kind,
      direct: {
        perSecond: direct.perSecond,
        non200: direct.non200,
        latency: directLatency.latency,
        delivered: direct.delivery,
      },
      stub,
      hookinbox,
      ratios: {
        hookinboxToStub: hookinbox.perSecond / stub.perSecond,
        stubToDirect: stub.perSecond / direct.perSecond,
        hookinboxToDirect: hookinbox.perSecond / direct.perSecond,
        addedP50HookinboxToStub: hookinbox.addedP50 / stub.addedP50,
      },
      background,
    };
  } finally {
    destination.send("stop");
    if (database) await dropDatabase(database);
  }
}

/** The failed checks of one store's run: lost acknowledged ids, bad or missing signatures. */
function failures(r: StoreResult): string[] {
  const out: string[] = [];
  const lost = (name: string, d: Delivery) => {
    if (d.missing > 0)
      out.push(`${name}: ${d.missing} of ${d.acked} acknowledged ids never arrived (LOST)`);
  };
  lost("direct", r.direct.delivered);
  for (const name of ["stub", "hookinbox"] as const) {
    lost(`${name} throughput`, r[name].delivered.throughput);
    const timed = r[name].delivered.latency;
    lost(`${name} latency`, timed);
    if (timed.signatures.bad > 0 || timed.signatures.checked < timed.distinct)
      out.push(
        `${name}: ${timed.signatures.bad} bad Standard Webhooks signatures, ${timed.signatures.checked} checked of ${timed.requests} requests`,
      );
  }
  return out;
}

function report(r: StoreResult): string {
  const n = (x: number) => Math.round(x).toLocaleString("en-US");
  const ms = (x: number) => x.toFixed(2);
  const x = (ratio: number) => `${ratio.toFixed(2)}×`;
  const counts = (d: Delivery) =>
    `acked ${d.acked}, arrived ${d.distinct} distinct in ${d.requests} requests, missing ${d.missing}`;
  const forwarder = (name: string, f: ForwarderResult) => [
    `  ${name}: ${n(f.perSecond)} events/s (acks ${n(f.ackPerSecond)}/s${f.non200 > 0 ? `, non-200 ${f.non200}` : ""}) · latency p50 ${ms(f.latency.p50)} p99 ${ms(f.latency.p99)} ms, added p50 ${ms(f.addedP50)} p99 ${ms(f.addedP99)} ms · RSS ${f.rss.startMb.toFixed(0)} MB at start, peak ${f.rss.peakMb.toFixed(0)} MB`,
    `    delivered (throughput): ${counts(f.delivered.throughput)}`,
    `    delivered (latency): ${counts(f.delivered.latency)}; signatures checked ${f.delivered.latency.signatures.checked}, bad ${f.delivered.latency.signatures.bad}`,
  ];
  return [
    `${r.store} (background CPU before start: ${r.background.toFixed(0)}% of a core${r.background > 15 ? " — WARNING: something else is running" : ""})`,
    `  direct: ${n(r.direct.perSecond)} events/s${r.direct.non200 > 0 ? ` (non-200 ${r.direct.non200})` : ""} · latency p50 ${ms(r.direct.latency.p50)} p99 ${ms(r.direct.latency.p99)} ms · delivered: ${counts(r.direct.delivered)}`,
    ...forwarder("stub", r.stub),
    ...forwarder("hookinbox", r.hookinbox),
    `  ratios: hookinbox/stub ${x(r.ratios.hookinboxToStub)} · stub/direct ${x(r.ratios.stubToDirect)} · hookinbox/direct ${x(r.ratios.hookinboxToDirect)} (goal ≥ ${GOAL_RATIO}×: ${r.ratios.hookinboxToDirect >= GOAL_RATIO ? "PASS" : "FAIL"}) · added p50 hookinbox/stub ${x(r.ratios.addedP50HookinboxToStub)}`,
  ].join("\n");
}

let failed = false;
try {
  console.log(
    `forwarding bench: ${EVENTS} events at ${IN_FLIGHT} in flight, ${LATENCY_EVENTS} for latency; direct, durable forwarder stub and hookinbox on ${STORES.join(", ")}`,
  );
  for (const kind of STORES) {
    const result = await runStore(kind);
    console.log(report(result));
    console.log(`FORWARD_RESULT ${JSON.stringify(result)}`);
    for (const failure of failures(result)) {
      console.error(`FAILED CHECK (${kind}) ${failure}`);
      failed = true;
    }
  }
  console.log(
    failed ? "checks: FAILED" : "checks: every acknowledged id delivered, signatures valid",
  );
} finally {
  closePoster();
  rmSync(work, { recursive: true, force: true });
}
if (failed) process.exitCode = 1;
