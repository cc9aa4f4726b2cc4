// npm run bench:breaker [-- --store sqlite|postgres] [-- --outage 30] [-- --cap 180]
//
// The circuit breaker's two goals, through a real gateway (`hookinbox start`, its own process)
// forwarding to a destination in its own process (bench/breaker/destination.ts), each run with
// the default breaker and, as the baseline, with `circuitBreaker: false`, in one run:
//
// 1. Flaky app, still up: it fails the first 0–2 attempts of each event (seeded per event id)
//    with a 500. 150 events are posted at once; delivered = events answered 2xx within 45 s of
//    the first post (goal 150/150). Retries: schedule 1s, 2s, 5s with full jitter, so that the
//    backoff itself allows 150/150 in 45 s (the default's 5-minute second retry would not, with
//    or without a breaker): what is measured is what the breaker holds back.
// 2. Outage: after a warm-up, the app refuses connections for --outage seconds (default 30)
//    while 2 events/s arrive, then comes back. Delay = first 2xx arrival − the moment it listened
//    again, for each event that arrived during the outage; max and p50 (goal ≤ 10 s), with the
//    default retry policy (5s, 5m, 30m, … full jitter). The wait ends when all have arrived or
//    --cap seconds after recovery (default 180); events still missing are counted.
// Both: the gateway's peak RSS (VmHWM and polled VmRSS). Each run gets a fresh store and gateway.
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
import { percentiles, repoRoot, signedEvents } from "./queue-events.ts";

const { values } = parseArgs({
  options: {
    store: { type: "string", default: "sqlite" },
    outage: { type: "string", default: "30" },
    cap: { type: "string", default: "180" },
  },
});
const STORE = values.store as "sqlite" | "postgres";
const OUTAGE_MS = Number(values.outage) * 1000;
const CAP_MS = Number(values.cap) * 1000;
const FLAKY_EVENTS = 150;
const FLAKY_WINDOW_MS = 45_000;
const OUTAGE_RATE = 2; // events per second during the outage
const GOAL_DELAY_MS = 10_000;
const DESTINATION_SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const work = mkdtempSync(join(tmpdir(), "hookinbox-bench-breaker-"));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- the destination process ----

interface Destination {
  readonly url: string;
  ask<T>(kind: string): Promise<T>;
}

function startDestination(): Promise<Destination> {
  const child: ChildProcess = spawn(
    process.execPath,
    [join(repoRoot, "bin/run-ts.mjs"), join(repoRoot, "bench/breaker/destination.ts")],
    { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
  const waiting = new Map<string, Array<(message: unknown) => void>>();
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`destination exited ${code}`)));
    child.on("message", (message: { kind: string; port?: number }) => {
      if (message.kind === "listening") {
        resolve({
          url: `http://127.0.0.1:${message.port}/hooks`,
          ask: <T>(kind: string) =>
            new Promise<T>((done) => {
              if (kind === "stop") {
                child.removeAllListeners("exit");
                child.once("exit", () => done(undefined as T));
              } else
                waiting.set(kind, [...(waiting.get(kind) ?? []), done as (m: unknown) => void]);
              child.send({ kind });
            }),
        });
        return;
      }
      waiting.get(message.kind)?.shift()?.(message);
    });
  });
}

interface Arrivals {
  requests: number;
  items: Array<[string, string]>;
  duplicates: number;
}

// ---- the gateway ----

type Breaker = "default" | "off";

async function startGateway(
  dir: string,
  store: string,
  url: string,
  breaker: Breaker,
  retry: Record<string, unknown> | undefined,
): Promise<ServerUnderTest> {
  return startHookinboxPostgres(dir, store, false, {
    destinations: {
      app: {
        url,
        secret: DESTINATION_SECRET,
        allowPrivateNetworks: true,
        forwardHeaders: ["x-bench-id"],
        ...(breaker === "off" ? { circuitBreaker: false } : {}),
        ...(retry ? { retry } : {}),
      },
    },
    routes: [{ from: "stripe", to: "app" }],
  });
}

/** A fresh store (an SQLite file in `dir`, or a PostgreSQL database) and how to drop it. */
async function freshStore(dir: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (STORE === "sqlite")
    return { url: `sqlite:${join(dir, "hookinbox.db")}`, drop: async () => undefined };
  const name = await createDatabase("breaker");
  return { url: databaseUrl(name), drop: () => dropDatabase(name) };
}

// ---- the client (this process) ----

const { post, postAll, close: closePoster } = eventPoster(50);

// ---- the scenarios ----

interface FlakyResult {
  breaker: Breaker;
  delivered: number;
  events: number;
  duplicates: number;
  requests: number;
  non200: number;
  peakRssMb: number;
}

async function flaky(breaker: Breaker): Promise<FlakyResult> {
  const dir = mkdtempSync(join(work, `flaky-${breaker}-`));
  const store = await freshStore(dir);
  const destination = await startDestination();
  const gateway = await startGateway(dir, store.url, destination.url, breaker, {
    schedule: ["1s", "2s", "5s"],
  });
  try {
    // The same ids in both runs: the same failures (k per id), on a fresh store and app each.
    const events = signedEvents("flaky", FLAKY_EVENTS);
    const start = process.hrtime.bigint();
    const non200 = await postAll(gateway.target, events);
    await sleep(FLAKY_WINDOW_MS - Number(process.hrtime.bigint() - start) / 1e6);
    const arrivals = await destination.ask<Arrivals>("arrivals");
    const deadline = start + BigInt(FLAKY_WINDOW_MS) * 1_000_000n;
    const ids = new Set(events.map((e) => e.id));
    const delivered = arrivals.items.filter(([id, at]) => ids.has(id) && BigInt(at) <= deadline);
    return {
      breaker,
      delivered: delivered.length,
      events: FLAKY_EVENTS,
      duplicates: arrivals.duplicates,
      requests: arrivals.requests,
      non200,
      peakRssMb: gateway.memory.peakMb(),
    };
  } finally {
    await gateway.stop();
    await destination.ask("stop");
    await store.drop();
  }
}

interface OutageResult {
  breaker: Breaker;
  outageEvents: number;
  arrived: number;
  /** ms from recovery to first 2xx, of the outage events that arrived within the cap. */
  delay: ReturnType<typeof percentiles> | null;
  duplicates: number;
  peakRssMb: number;
}

async function outage(breaker: Breaker): Promise<OutageResult> {
  const dir = mkdtempSync(join(work, `outage-${breaker}-`));
  const store = await freshStore(dir);
  const destination = await startDestination();
  await destination.ask("healthy");
  // The default retry policy: this is where its 5-minute second retry shows.
  const gateway = await startGateway(dir, store.url, destination.url, breaker, undefined);
  try {
    const tag = `outage_${breaker}_${Date.now()}`;
    const warm = signedEvents(`${tag}_warm`, 10);
    await postAll(gateway.target, warm);
    for (;;) {
      const { items } = await destination.ask<Arrivals>("arrivals");
      if (items.length >= warm.length) break;
      await sleep(50);
    }
    await destination.ask("down");
    const during = signedEvents(`${tag}_during`, (OUTAGE_MS / 1000) * OUTAGE_RATE);
    const outageStart = Date.now();
    for (let i = 0; i < during.length; i++) {
      await sleep(outageStart + (i * 1000) / OUTAGE_RATE - Date.now());
      const status = await post(gateway.target, during[i]!);
      if (status !== 200) throw new Error(`the gateway answered ${status}`);
    }
    await sleep(outageStart + OUTAGE_MS - Date.now());
    const { at } = await destination.ask<{ at: string }>("up");
    const recovered = BigInt(at);
    const ids = new Set(during.map((e) => e.id));
    let arrivals: Arrivals;
    for (;;) {
      arrivals = await destination.ask<Arrivals>("arrivals");
      const arrived = arrivals.items.filter(([id]) => ids.has(id)).length;
      if (arrived === during.length) break;
      if (Number(process.hrtime.bigint() - recovered) / 1e6 > CAP_MS) break;
      await sleep(100);
    }
    const delays = arrivals.items
      .filter(([id]) => ids.has(id))
      .map(([, time]) => Math.max(0, Number(BigInt(time) - recovered) / 1e6));
    return {
      breaker,
      outageEvents: during.length,
      arrived: delays.length,
      delay: delays.length > 0 ? percentiles(delays) : null,
      duplicates: arrivals.duplicates,
      peakRssMb: gateway.memory.peakMb(),
    };
  } finally {
    await gateway.stop();
    await destination.ask("stop");
    await store.drop();
  }
}

// ---- the report ----

const label = (b: Breaker) => (b === "default" ? "default breaker" : "breaker off    ");
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function flakyLine(r: FlakyResult): string {
  const goal = r.delivered === r.events ? "PASS" : "FAIL";
  return `  ${label(r.breaker)}: delivered ${r.delivered}/${r.events} within 45 s (goal ${r.events}/${r.events}: ${goal}) · ${r.requests} requests · ${r.duplicates} events answered 2xx twice · peak RSS ${r.peakRssMb.toFixed(0)} MB${r.non200 ? ` · ${r.non200} posts refused` : ""}`;
}

function outageLine(r: OutageResult): string {
  const missing = r.outageEvents - r.arrived;
  if (!r.delay) return `  ${label(r.breaker)}: none of ${r.outageEvents} arrived within the cap`;
  const max = missing > 0 ? `> ${seconds(CAP_MS)} (${missing} not arrived)` : seconds(r.delay.max);
  const goal = missing === 0 && r.delay.max <= GOAL_DELAY_MS ? "PASS" : "FAIL";
  return `  ${label(r.breaker)}: ${r.arrived}/${r.outageEvents} arrived · delay after recovery p50 ${seconds(r.delay.p50)}, p90 ${seconds(r.delay.p90)}, max ${max} (goal max ≤ 10 s: ${goal}) · ${r.duplicates} events answered 2xx twice · peak RSS ${r.peakRssMb.toFixed(0)} MB`;
}

try {
  console.log(
    `circuit breaker bench (${STORE}): flaky app, ${FLAKY_EVENTS} events, delivered within 45 s`,
  );
  const flakyResults: FlakyResult[] = [];
  for (const breaker of ["default", "off"] as const) {
    const result = await flaky(breaker);
    flakyResults.push(result);
    console.log(flakyLine(result));
  }
  console.log(
    `outage: ${OUTAGE_MS / 1000} s of refused connections, ${OUTAGE_RATE} events/s meanwhile; delay from recovery to arrival`,
  );
  const outageResults: OutageResult[] = [];
  for (const breaker of ["default", "off"] as const) {
    const result = await outage(breaker);
    outageResults.push(result);
    console.log(outageLine(result));
  }
  console.log(`BREAKER_RESULT ${JSON.stringify({ store: STORE, flakyResults, outageResults })}`);
} finally {
  closePoster();
  rmSync(work, { recursive: true, force: true });
}
