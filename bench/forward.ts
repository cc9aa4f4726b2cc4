// npm run bench:forward [-- --events N] [-- --latency N] [-- --stores sqlite,postgres]
//
// Forwarding (issue 11, "Benchmark"): hookinbox in front of an app, against posting the same
// pre-signed events straight to that app, in one run, on SQLite and on PostgreSQL. Every side
// runs in its own process: the destination (bench/forward/receiver.ts,
// a bare node:http server), the gateway (`hookinbox start`), and this process as the client.
//
// Per store:
// 1. Throughput: N pre-signed ~2 KB Stripe events, 50 in flight on keep-alive connections.
//    - direct: POSTed to the destination; events/s from the first send to the last answer.
//    - forward: POSTed to the gateway, which stores, answers, and forwards each to the same
//      destination (signed, with its `x-bench-id` header forwarded); events/s from the first
//      send to the last first arrival at the destination. Ratio forward/direct (goal ≥ 0.8).
// 2. Latency: L events one at a time, each sent after the previous one arrived; latency = first
//    arrival at the destination minus the send, both process.hrtime.bigint() (CLOCK_MONOTONIC,
//    one clock for the machine). Direct and forward the same way; added = forward − direct at
//    p50 and p99.
// 3. The gateway's peak RSS (VmHWM and polled VmRSS).
// PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), a fresh
// database per run, dropped after.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { eventPoster } from "./forward/post-events.ts";
import type { ServerUnderTest } from "./ingest/servers.ts";
import { createDatabase, databaseUrl, dropDatabase } from "./postgres/db.ts";
import { startHookinboxPostgres } from "./postgres/servers.ts";
import {
  backgroundCpu,
  percentiles,
  repoRoot,
  type SignedEvent,
  signedEvents,
} from "./queue-events.ts";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "20000" },
    latency: { type: "string", default: "500" },
    stores: { type: "string", default: "sqlite,postgres" },
  },
});
const EVENTS = Number(values.events);
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
    [join(repoRoot, "bin/run-ts.mjs"), join(repoRoot, "bench/forward/receiver.ts")],
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

// ---- the gateway process ----

/** `hookinbox start` forwarding every `stripe` event to the destination (default logging). */
function startGateway(dir: string, store: string, destinationUrl: string) {
  return startHookinboxPostgres(dir, store, false, {
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

const { post, postAll, close: closePoster } = eventPoster(IN_FLIGHT);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Events/s from `start` to the last first arrival of `count` events at the destination. */
async function arrivalsPerSecond(destination: Destination, start: bigint, count: number) {
  for (;;) {
    const { distinct } = await destination.ask<{ distinct: number }>("count");
    if (distinct >= count) break;
    await sleep(50);
  }
  const { items } = await destination.ask<{ items: Array<[string, string]> }>("arrivals");
  const last = items.reduce((max, [, at]) => (BigInt(at) > max ? BigInt(at) : max), start);
  return count / (Number(last - start) / 1e9);
}

/** One event at a time: send, wait for its first arrival; ms per event. */
async function latencies(destination: Destination, url: string, events: readonly SignedEvent[]) {
  destination.send("push");
  const times: number[] = [];
  for (const event of events) {
    const arrived = new Promise<bigint>((resolve) =>
      destination.onArrival((id, at) => {
        if (id === event.id) resolve(at);
      }),
    );
    const sent = process.hrtime.bigint();
    const status = await post(url, event);
    if (status !== 200) throw new Error(`${url} answered ${status}`);
    times.push(Number((await arrived) - sent) / 1e6);
  }
  destination.onArrival(null);
  destination.send("reset");
  return percentiles(times);
}

interface StoreResult {
  store: string;
  direct: { perSecond: number; non200: number };
  forward: { perSecond: number; ackPerSecond: number; non200: number };
  ratio: number;
  latency: {
    direct: ReturnType<typeof percentiles>;
    forward: ReturnType<typeof percentiles>;
    addedP50: number;
    addedP99: number;
  };
  rss: { startMb: number; peakMb: number };
  background: number;
}

async function runStore(kind: "sqlite" | "postgres"): Promise<StoreResult> {
  const dir = mkdtempSync(join(work, `${kind}-`));
  const database = kind === "postgres" ? await createDatabase("forward") : null;
  const store = database ? databaseUrl(database) : `sqlite:${join(dir, "hookinbox.db")}`;
  const background = await backgroundCpu();
  const destination = await startDestination();
  let gateway: ServerUnderTest | null = null;
  try {
    // Direct: the same kind of events straight to the destination.
    const directEvents = signedEvents(`direct_${kind}`, EVENTS);
    let start = process.hrtime.bigint();
    const directNon200 = await postAll(destination.url, directEvents);
    const directPerSecond = EVENTS / (Number(process.hrtime.bigint() - start) / 1e9);
    destination.send("reset");

    gateway = await startGateway(dir, store, destination.url);
    const forwardEvents = signedEvents(`forward_${kind}`, EVENTS);
    start = process.hrtime.bigint();
    const forwardNon200 = await postAll(gateway.target, forwardEvents);
    const ackPerSecond = EVENTS / (Number(process.hrtime.bigint() - start) / 1e9);
    const forwardPerSecond = await arrivalsPerSecond(destination, start, EVENTS - forwardNon200);
    destination.send("reset");

    const directLatency = await latencies(
      destination,
      destination.url,
      signedEvents(`direct_latency_${kind}`, LATENCY_EVENTS),
    );
    const forwardLatency = await latencies(
      destination,
      gateway.target,
      signedEvents(`forward_latency_${kind}`, LATENCY_EVENTS),
    );
    const rss = { startMb: gateway.memory.startMb, peakMb: gateway.memory.peakMb() };
    return {
      store: kind,
      direct: { perSecond: directPerSecond, non200: directNon200 },
      forward: { perSecond: forwardPerSecond, ackPerSecond, non200: forwardNon200 },
      ratio: forwardPerSecond / directPerSecond,
      latency: {
        direct: directLatency,
        forward: forwardLatency,
        addedP50: forwardLatency.p50 - directLatency.p50,
        addedP99: forwardLatency.p99 - directLatency.p99,
      },
      rss,
      background,
    };
  } finally {
    await gateway?.stop();
    destination.send("stop");
    if (database) await dropDatabase(database);
  }
}

function report(r: StoreResult): string {
  const n = (x: number) => Math.round(x).toLocaleString("en-US");
  const ms = (x: number) => x.toFixed(2);
  return [
    `${r.store} (background CPU before start: ${r.background.toFixed(0)}% of a core${r.background > 15 ? " — WARNING: something else is running" : ""})`,
    `  throughput: direct ${n(r.direct.perSecond)} events/s · forward ${n(r.forward.perSecond)} events/s (ingest acks ${n(r.forward.ackPerSecond)}/s) · ratio ${r.ratio.toFixed(2)}× (goal ≥ ${GOAL_RATIO}×: ${r.ratio >= GOAL_RATIO ? "PASS" : "FAIL"})` +
      (r.direct.non200 + r.forward.non200 > 0
        ? ` · non-200: direct ${r.direct.non200}, forward ${r.forward.non200}`
        : ""),
    `  latency (send → arrival, ${LATENCY_EVENTS} one at a time): direct p50 ${ms(r.latency.direct.p50)} p99 ${ms(r.latency.direct.p99)} ms · forward p50 ${ms(r.latency.forward.p50)} p99 ${ms(r.latency.forward.p99)} ms · added p50 ${ms(r.latency.addedP50)} p99 ${ms(r.latency.addedP99)} ms`,
    `  gateway RSS: ${r.rss.startMb.toFixed(0)} MB at start, peak ${r.rss.peakMb.toFixed(0)} MB`,
  ].join("\n");
}

try {
  console.log(
    `forwarding bench: ${EVENTS} events at ${IN_FLIGHT} in flight, ${LATENCY_EVENTS} for latency`,
  );
  for (const kind of values.stores.split(",") as Array<"sqlite" | "postgres">) {
    const result = await runStore(kind);
    console.log(report(result));
    console.log(`FORWARD_RESULT ${JSON.stringify(result)}`);
  }
} finally {
  closePoster();
  rmSync(work, { recursive: true, force: true });
}
