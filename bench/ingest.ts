// npm run bench:ingest [-- --write-docs] [-- --profile] [-- --autocannon] [-- --quick]
//
// Ingest throughput and latency of hookinbox's gateway (SQLite store, durable commits) next to
// a bare node:http server, in one run, under the same load generator. Every server and every
// client is its own process. Per server:
//   warm-up   wrk 2 s, then saturation wrk -t1 -c50 for 10 s  → req/s, p50/p99 at saturation
//   fixed     2,000 then 5,000 req/s, open loop, 4 s each (paced-client.ts) → p50/p99 at a
//             fixed offered load (at saturation p99 is mostly queueing on the 2 shared cores)
// Scenarios: bare, the durable stub ("the least a durable gateway can do": HMAC on the raw
// bytes, id by a scan, writer thread group-committing event + receipt, 200 after COMMIT —
// bench/ingest/durable-stub.ts), hookinbox with unique ids, hookinbox where half the deliveries are
// duplicates. Afterwards the SQLite file is checked against the 2xx the clients received.
// --profile runs only "hookinbox, unique ids" under `node --cpu-prof` and prints hot spots.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { type LoadResult, paced, saturate } from "./ingest/clients.ts";
import { printProfileTop } from "./ingest/profile-top.ts";
import { machineFacts, printTable, type ScenarioResult, writeDocs } from "./ingest/report.ts";
import { phaseIds, writeSignedSlice } from "./ingest/requests.ts";
import {
  backgroundCpu,
  cpuWindow,
  type ServerUnderTest,
  startBare,
  startDurableStub,
  startHookinbox,
  wrkVersion,
} from "./ingest/servers.ts";
import { verifyStore } from "./ingest/verify-store.ts";

const WARMUP_S = 2;
const SATURATION_S = 10;
// 5,000 req/s is what the issue asks for; it turned out to be ~85–90% of hookinbox's capacity
// here (so still queueing), hence also 2,000 req/s (~35%) for the latency of an unloaded server.
const FIXED_RATES = [2_000, 5_000];
const FIXED_S = 4;
/** Above this much "rest" CPU during saturation, something else was running. */
const REST_LIMIT = 25;

const args = new Set(process.argv.slice(2));
const profile = args.has("--profile");
// --autocannon forces the fallback client (what runs when wrk is not installed).
const wrk = args.has("--autocannon") ? null : wrkVersion();
const generator = wrk ? "wrk" : "autocannon";
const work = mkdtempSync(join(tmpdir(), "hookinbox-bench-"));
const facts = machineFacts(work);
console.log(facts.lines.join("\n"));
console.log(
  `saturation generator: ${wrk ? `${wrk}, -t1 -c50, Lua replay of pre-signed requests` : "autocannon 9 (wrk not installed), 50 connections, child process"}`,
);
console.log(
  `fixed-rate generator: bench/ingest/paced-client.ts, open loop, ${FIXED_RATES.join(" and ")} req/s, 50 connections\n`,
);

/** The config of the scenarios that turn one feature off, to price it against "unique ids". */
const offSettings: Partial<Record<string, Record<string, unknown>>> = {
  "audit-off": { audit: { enabled: false } },
  "metrics-off": { metrics: { enabled: false } },
};

/** Ceiling for slice sizes: bare's measured saturation rate (hookinbox cannot beat it). */
let ceilingRps = 40_000;

async function scenario(
  name: string,
  kind: "bare" | "stub" | "unique" | "duplicates" | "audit-off" | "metrics-off",
): Promise<ScenarioResult> {
  const dir = join(work, kind);
  mkdirSync(dir);
  // Other jobs on these 2 cores lower every number: wait up to ~15 s for a quiet machine.
  let background = await backgroundCpu();
  for (let tries = 0; background > 15 && tries < 15; tries++) background = await backgroundCpu();
  console.log(
    `  ${name} · background CPU before start: ${background.toFixed(0)}% of a core` +
      (background > 15 ? " — WARNING: something else is running; numbers are disturbed" : ""),
  );
  const duplicates = kind === "duplicates";
  // Sign each phase's slice right before it runs (Stripe's 5-minute window).
  const slice = (phase: string, count: number) => {
    const file = join(dir, `${phase}.requests`);
    writeSignedSlice(file, phaseIds(`${kind}_${phase}`, Math.ceil(count), duplicates));
    return file;
  };
  const server: ServerUnderTest =
    kind === "bare"
      ? await startBare()
      : kind === "stub"
        ? await startDurableStub(dir)
        : await startHookinbox(dir, profile, offSettings[kind]);
  const loads: LoadResult[] = [];
  const run = async (label: string, load: Promise<LoadResult>) => {
    const result = await load;
    loads.push(result);
    console.log(
      `  ${name} · ${label}: ${Math.round(result.rps)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, ` +
        `p99 ${result.p99Ms.toFixed(2)} ms, non-2xx ${result.non2xx}, socket errors ${result.socketErrors}` +
        (result.wraps ? `, SLICE RAN OUT ${result.wraps}× (ids repeated)` : ""),
    );
    return result;
  };
  try {
    const warm = await run(
      "warm-up",
      saturate(generator, server.target, slice("warmup", ceilingRps * WARMUP_S * 1.2), WARMUP_S),
    );
    const afterWarmupMb = server.memory.nowMb();
    // Unique ids for the whole measured run: twice the warm-up rate, capped by the ceiling.
    const satCount = Math.min(ceilingRps * 1.1, warm.rps * 2) * SATURATION_S;
    const satFile = slice("saturation", satCount);
    const cpu = cpuWindow(server.pid);
    const sat = await run("saturation", saturate(generator, server.target, satFile, SATURATION_S));
    const window = cpu();
    // "rest" = the kernel's loopback work not charged to a process, plus any other process.
    const clientPct = (100 * sat.clientCpuS) / window.seconds;
    const restPct = window.machinePct - window.serverPct - clientPct;
    const satCpu = { serverPct: window.serverPct, clientPct, restPct };
    console.log(
      `  ${name} · CPU during saturation (% of a core): server ${satCpu.serverPct.toFixed(0)}%, ` +
        `load generator ${clientPct.toFixed(0)}%, rest ${restPct.toFixed(0)}% ` +
        `(machine ${window.machinePct.toFixed(0)}% of ${availableParallelism() * 100}%)` +
        (restPct > REST_LIMIT ? " — WARNING: something else ran during the run" : ""),
    );
    if (kind === "bare") ceilingRps = sat.rps;
    const fixed: LoadResult[] = [];
    // Under --profile only warm-up + saturation run, so idle time does not dilute the profile.
    for (const rate of profile ? [] : FIXED_RATES) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const file = slice(`fixed${rate}`, rate * FIXED_S);
      fixed.push(await run(`fixed ${rate}/s`, paced(server.target, file, rate)));
    }
    const endMb = server.memory.nowMb();
    await server.stop();
    const rss = {
      startMb: server.memory.startMb,
      afterWarmupMb,
      endMb,
      peakMb: server.memory.peakMb(),
    };
    const store = kind === "bare" ? null : verifyStore(join(dir, "hookinbox.db"), loads);
    if (store)
      console.log(`  ${name} · store: ${store.pass ? "OK" : "MISMATCH"}: ${store.summary}`);
    return { name, background, warm, sat, satCpu, fixed, rss, store };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

try {
  if (profile) {
    await scenario("hookinbox, unique ids (under --cpu-prof)", "unique");
    const profileDir = join(work, "unique", "profile");
    // One file per thread: the main thread (HTTP, verification) and the SQLite writer thread.
    const files = readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile"));
    if (files.length === 0) throw new Error(`no .cpuprofile in ${profileDir}`);
    for (const file of files) {
      console.log(`\n${file}`);
      printProfileTop(join(profileDir, file), 25);
    }
  } else {
    const results = [
      await scenario("bare node:http", "bare"),
      await scenario("durable stub (least a durable gateway does)", "stub"),
      await scenario("hookinbox, unique ids", "unique"),
    ];
    // --quick: only the three above (the ratios), for a short run on a busy machine.
    if (!args.has("--quick")) {
      results.push(
        await scenario("hookinbox, 50% duplicates", "duplicates"),
        await scenario("hookinbox, unique ids, audit log off", "audit-off"),
        await scenario("hookinbox, unique ids, metrics off", "metrics-off"),
      );
    }
    const table = printTable(results, FIXED_RATES);
    console.log(`\n${table}`);
    const [bare, stub, unique, , auditOff, metricsOff] = results;
    const ratio = (on: ScenarioResult, off: ScenarioResult) =>
      (on.sat.rps / off.sat.rps).toFixed(2);
    // Server CPU (all threads) per answered request: steadier than req/s when other processes
    // take the cores, since it does not count the time the server waited for a core.
    const cpuPerRequest = (r: ScenarioResult) =>
      (r.satCpu.serverPct * 10_000 * r.sat.seconds) / Math.max(r.sat.completed, 1);
    console.log(
      `server CPU per request at saturation: bare ${cpuPerRequest(bare!).toFixed(0)} µs, ` +
        `durable stub ${cpuPerRequest(stub!).toFixed(0)} µs, hookinbox ${cpuPerRequest(unique!).toFixed(0)} µs ` +
        `(hookinbox/stub ${(cpuPerRequest(unique!) / cpuPerRequest(stub!)).toFixed(2)}×)`,
    );
    console.log(
      `hookinbox (unique ids) at saturation: ${ratio(unique!, stub!)}× the durable stub ` +
        `(goal ≥ 0.9), ${ratio(unique!, bare!)}× bare node:http (stretch ≥ 0.5); ` +
        `durable stub ${ratio(stub!, bare!)}× bare`,
    );
    if (auditOff && metricsOff) {
      console.log(
        `feature cost at saturation: audit log on/off ${ratio(unique!, auditOff)}×, ` +
          `metrics on/off ${ratio(unique!, metricsOff)}×`,
      );
    }
    if (args.has("--write-docs") && !args.has("--quick")) {
      if (results.some((r) => r.background > 15 || r.satCpu.restPct > REST_LIMIT)) {
        console.log("docs/BENCHMARKS.md NOT updated: other processes were using the CPU");
      } else {
        writeDocs(facts.lines, table, { generator: wrk ?? "autocannon 9" });
        console.log("docs/BENCHMARKS.md updated");
      }
    }
    // Any non-2xx from hookinbox is a bug (every request is validly signed), as is a store mismatch.
    const non2xx = (r: ScenarioResult) => [r.warm, r.sat, ...r.fixed].some((l) => l.non2xx > 0);
    if (results.some((r) => r.store && (!r.store.pass || non2xx(r)))) process.exitCode = 1;
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
