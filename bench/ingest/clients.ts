// The load generators, each run as its own child process against a server under test.
import { join } from "node:path";
import { repoRoot, runChild } from "./servers.ts";

/** One load phase against one server, as the client saw it. */
export interface LoadResult {
  readonly completed: number; // responses received (any status)
  readonly seconds: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly socketErrors: number; // connect/read/write errors and timeouts
  readonly sent: number; // requests handed to sockets (≥ completed: some are in flight at stop)
  readonly ok: number; // 2xx responses
  readonly non2xx: number;
  /** Non-2xx answers by status and error code (the paced client only). */
  readonly non2xxBy?: Readonly<Record<string, number>>;
  readonly wraps: number; // times the slice ran out and ids started repeating (must be 0)
  readonly acksFile: string; // eventId of every 2xx response, one per line
  readonly clientCpuS: number; // CPU the load generator process used
}

export const CONNECTIONS = 50;

/**
 * Saturation: wrk -t1 -c50 replaying the slice (or autocannon when wrk is missing).
 * `connections`: fewer when several clients share the load (bench:postgres's scale-out).
 */
export async function saturate(
  generator: "wrk" | "autocannon",
  target: string,
  slice: string,
  seconds: number,
  connections = CONNECTIONS,
): Promise<LoadResult> {
  const acksFile = `${slice}.acks`;
  if (generator === "autocannon") {
    const script = join(repoRoot, "bench/ingest/autocannon-client.ts");
    const args = [script, target, slice, String(seconds), String(connections), acksFile];
    const { out, cpuS } = await runTs(args);
    return withRps(JSON.parse(out), acksFile, cpuS);
  }
  const { out, cpuS } = await runChild(
    "wrk",
    [
      "-t1",
      `-c${connections}`,
      `-d${seconds}s`,
      "--timeout",
      "10s",
      "-s",
      "bench/ingest/replay.lua",
      target,
    ],
    { BENCH_REQUESTS: slice, BENCH_ACKS: acksFile },
  );
  const line = /^WRK_RESULT (.*)$/m.exec(out)?.[1];
  if (!line) throw new Error(`no WRK_RESULT in wrk output:\n${out}`);
  const r = JSON.parse(line);
  return withRps(
    {
      ...r,
      seconds: r.durationUs / 1e6,
      p50Ms: r.p50Us / 1000,
      p99Ms: r.p99Us / 1000,
      maxMs: r.maxUs / 1000,
    },
    acksFile,
    cpuS,
  );
}

/** Fixed offered rate: bench/ingest/paced-client.ts sends the whole slice at `rate` req/s. */
export async function paced(target: string, slice: string, rate: number): Promise<LoadResult> {
  const acksFile = `${slice}.acks`;
  const script = join(repoRoot, "bench/ingest/paced-client.ts");
  const { out, cpuS } = await runTs([
    script,
    target,
    slice,
    String(rate),
    String(CONNECTIONS),
    acksFile,
  ]);
  return withRps(JSON.parse(out), acksFile, cpuS);
}

function runTs(args: string[]) {
  return runChild(process.execPath, [join(repoRoot, "bin/run-ts.mjs"), ...args]);
}

type Parsed = Omit<LoadResult, "rps" | "acksFile" | "clientCpuS">;

function withRps(r: Parsed, acksFile: string, clientCpuS: number): LoadResult {
  return { ...r, rps: r.completed / r.seconds, acksFile, clientCpuS };
}
