// Starts each server under test as its own child process and watches its memory.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { STRIPE_SECRET } from "./requests.ts";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export interface ServerUnderTest {
  readonly pid: number;
  /** Where to POST, e.g. http://127.0.0.1:41234/webhooks/stripe */
  readonly target: string;
  readonly memory: MemoryWatch;
  /** SIGTERM, then wait for a clean exit (the gateway checkpoints SQLite and writes --cpu-prof). */
  stop(): Promise<void>;
}

/** The bare node:http baseline (bench/ingest/bare-server.ts). */
export function startBare(): Promise<ServerUnderTest> {
  const args = [join(repoRoot, "bin/run-ts.mjs"), join(repoRoot, "bench/ingest/bare-server.ts")];
  return launch(args, repoRoot, "/webhooks/stripe");
}

/**
 * The least a durable gateway can do (bench/ingest/durable-stub.ts): HMAC on the raw bytes, id
 * by a scan, group commit of event + receipt on a writer thread, 200 after COMMIT. Its SQLite
 * file is `dir/hookinbox.db`, with the tables verify-store.ts reads.
 */
export function startDurableStub(dir: string): Promise<ServerUnderTest> {
  const args = [
    join(repoRoot, "bin/run-ts.mjs"),
    join(repoRoot, "bench/ingest/durable-stub.ts"),
    join(dir, "hookinbox.db"),
  ];
  return launch(args, repoRoot, "/webhooks/stripe");
}

/**
 * `hookinbox start` with a JSON config: an SQLite file in `dir`, one `stripe` source, default
 * ("info") logging. pino writes a line per webhook to stdout, which goes to /dev/null here.
 * `settings` adds top-level config keys (`{ audit: { enabled: false } }` for the off scenario).
 */
export function startHookinbox(
  dir: string,
  cpuProfile = false,
  settings: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<ServerUnderTest> {
  const config = join(dir, "hookinbox.config.json");
  const store = `sqlite:${join(dir, "hookinbox.db")}`;
  writeFileSync(
    config,
    JSON.stringify({
      store,
      sources: { stripe: { provider: "stripe", secrets: [STRIPE_SECRET] } },
      ...settings,
    }),
  );
  const profile = cpuProfile ? ["--cpu-prof", "--cpu-prof-dir", join(dir, "profile")] : [];
  const cli = [join(repoRoot, "bin/hookinbox.mjs"), "start", "--config", config, "--port", "0"];
  return launch([...profile, ...cli], dir, "/webhooks/stripe", env);
}

/**
 * Spawns `node <args>` in `cwd` (with `env` added to PATH and HOME) and resolves once it prints
 * "listening on <url>" on stderr; `target` is that url + `path` (also used by bench/soak.ts).
 */
export function launch(
  args: string[],
  cwd: string,
  path: string,
  env: Record<string, string> = {},
): Promise<ServerUnderTest> {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  let started = false;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stderr}`)), 20_000);
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(stderr)?.[1];
      if (url && !started) {
        started = true;
        clearTimeout(timer);
        resolve(running(child, `${url}${path}`, exited));
      }
    });
    child.once("exit", (code) => reject(new Error(`server exited (${code}):\n${stderr}`)));
  });
}

function running(child: ChildProcess, target: string, exited: Promise<void>): ServerUnderTest {
  const pid = child.pid!;
  const memory = watchMemory(pid);
  return {
    pid,
    target,
    memory,
    async stop() {
      memory.stop();
      child.kill("SIGTERM");
      const timeout = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timeout);
    },
  };
}

/** VmRSS polled every 100 ms plus the kernel's own high-water mark (VmHWM), in MB. */
export interface MemoryWatch {
  readonly startMb: number;
  /** Current RSS (call before stop()). */
  nowMb(): number;
  /** max(VmHWM, highest polled VmRSS) */
  peakMb(): number;
  stop(): void;
}

/** VmRSS polled every 100 ms plus VmHWM, in MB (also used by bench/postgres). */
export function watchMemory(pid: number): MemoryWatch {
  const read = (field: "VmRSS" | "VmHWM") => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
    } catch {
      return 0; // the process already exited
    }
  };
  const startMb = read("VmRSS");
  let polledMax = startMb;
  let hwm = 0;
  const timer = setInterval(() => {
    polledMax = Math.max(polledMax, read("VmRSS"));
  }, 100);
  return {
    startMb,
    nowMb: () => read("VmRSS"),
    peakMb: () => Math.max(polledMax, hwm || read("VmHWM")),
    stop() {
      hwm = read("VmHWM");
      clearInterval(timer);
    },
  };
}

/** Runs a command to completion: its stdout and the CPU it used (threads included, in s). */
export function runChild(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ out: string; cpuS: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString();
    });
    // Polled, since an exited child's /proc entry is gone: misses at most its last 100 ms.
    let ticks = 0;
    const poll = setInterval(() => {
      ticks = processTicks(child.pid!) ?? ticks;
    }, 100);
    child.once("exit", (code) => {
      clearInterval(poll);
      if (code === 0) resolve({ out, cpuS: ticks / 100 });
      else reject(new Error(`${command} exited ${code}: ${err}${out}`));
    });
  });
}

/** `wrk -v`'s first line, or null when wrk is not installed. */
export function wrkVersion(): string | null {
  const run = spawnSync("wrk", ["-v"], { encoding: "utf8" }); // exits 1 after its banner
  if (run.error) return null;
  return (run.stdout.split("\n")[0] ?? "wrk").replace(/\s*Copyright.*$/, "").trim();
}

/** Busy CPU time of the whole machine (all but idle and iowait), in clock ticks (1/100 s). */
function machineTicks(): number {
  const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/);
  const n = ticks.map(Number);
  return n.reduce((a, b) => a + b, 0) - (n[3] ?? 0) - (n[4] ?? 0);
}

/**
 * Starts a CPU window: the returned function gives the server's CPU use (% of one core) and
 * the whole machine's (% of one core, so up to nproc × 100) since the call. The difference is
 * the load generator, the kernel's loopback work, and anything else running.
 */
export function cpuWindow(pid: number): () => CpuWindow {
  const server = () => processTicks(pid) ?? 0;
  const [s0, m0, t0] = [server(), machineTicks(), performance.now()];
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    return {
      seconds,
      serverPct: (server() - s0) / seconds,
      machinePct: (machineTicks() - m0) / seconds,
    };
  };
}

export interface CpuWindow {
  readonly seconds: number;
  /** % of one core */
  readonly serverPct: number;
  /** % of one core, up to nproc × 100 */
  readonly machinePct: number;
}

/** utime + stime of a process (all its threads), in clock ticks; undefined once it is gone. */
function processTicks(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/**
 * CPU the rest of the machine uses while no bench process runs (% of one core, over `ms`).
 * Other jobs on these 2 cores (a test run, a compiler) lower every number; printed per scenario.
 */
export async function backgroundCpu(ms = 1000): Promise<number> {
  const [m0, t0] = [machineTicks(), performance.now()];
  await new Promise((resolve) => setTimeout(resolve, ms));
  return (machineTicks() - m0) / ((performance.now() - t0) / 1000);
}
