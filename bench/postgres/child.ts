// Child processes of bench/postgres.ts, each measured side in its own Node process with an IPC
// channel: the child tells the parent when its timed part starts and ends (so the parent can
// watch PostgreSQL's CPU over exactly that window) and, for latency runs, when a handler starts.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "../ingest/servers.ts";
import { parseResult } from "../queue-events.ts";

export interface Child {
  readonly process: ChildProcess;
  /** Resolves with the child's QUEUE_RESULT line (parsed) once it exits 0. */
  readonly result: Promise<unknown>;
}

/** Runs `bench/postgres/<script>` through bin/run-ts.mjs with an IPC channel. */
export function startChild(
  script: string,
  args: string[],
  onMessage: (message: unknown) => void = () => undefined,
  env: Record<string, string> = {},
): Child {
  const child = spawn(
    process.execPath,
    [join(repoRoot, "bin/run-ts.mjs"), join(repoRoot, "bench/postgres", script), ...args],
    {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    },
  );
  let out = "";
  let err = "";
  child.stdout!.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr!.on("data", (c: Buffer) => {
    err += c.toString();
  });
  child.on("message", onMessage);
  const result = new Promise<unknown>((resolve, reject) => {
    child.once("exit", (code) => {
      if (code !== 0) reject(new Error(`${script} exited ${code}:\n${err}${out}`));
      else {
        try {
          resolve(parseResult<unknown>(out));
        } catch (error) {
          reject(new Error(`${(error as Error).message}\n${err}`));
        }
      }
    });
  });
  result.catch(() => undefined);
  return { process: child, result };
}

/** Sends a message to the parent (no-op without an IPC channel). */
export function tell(message: unknown): void {
  process.send?.(message);
}

/** mulberry32 with bench/queue-burndown.ts's seed: the same key sequence in every process. */

/** Watches handler starts and ends per ordering key / queue: order and overlap violations. */
export function orderCheck() {
  const lastVersion = new Map<string, number>();
  const running = new Set<string>();
  let orderViolations = 0;
  let overlaps = 0;
  return {
    start(key: string | null, version: number | null) {
      if (key === null) return;
      if (running.has(key)) overlaps++;
      running.add(key);
      if (version !== null) {
        if (version <= (lastVersion.get(key) ?? Number.NEGATIVE_INFINITY)) orderViolations++;
        lastVersion.set(key, version);
      }
    },
    end(key: string | null) {
      if (key !== null) running.delete(key);
    },
    get orderViolations() {
      return orderViolations;
    },
    get overlaps() {
      return overlaps;
    },
  };
}

/**
 * graphile-worker's preset for a mode. "default": nothing beyond `concurrency` (its defaults:
 * maxPoolSize 10, pollInterval 2000, no local queue, no completion batching). "fast": the settings
 * of its performance page (worker.graphile.org/docs/performance, "Batching"): a local queue of
 * 500, completeJobBatchDelay 0, failJobBatchDelay 0, maxPoolSize = concurrency + 1.
 * BENCH_GRAPHILE_LQ overrides the local queue size, for exploration only (bench:postgres never
 * sets it; docs/BENCHMARKS.md mentions what size 11 did).
 */
export function graphilePreset(mode: string, concurrency: number) {
  return mode === "fast"
    ? {
        worker: {
          localQueue: { size: Number(process.env.BENCH_GRAPHILE_LQ ?? 500) },
          completeJobBatchDelay: 0,
          failJobBatchDelay: 0,
          maxPoolSize: concurrency + 1,
        },
      }
    : {};
}

export { seededRandom } from "../queue-events.ts";
