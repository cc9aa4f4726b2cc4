// Consumer projects from the packed tarball. The package is packed once (or taken from
// HOOKINBOX_PACKED, a folder where `npm run check:package` already packed it) and installed with
// the consumers' frameworks into one temp folder; each consumer is a folder inside it with its own
// files, resolving `hookinbox` from that shared node_modules, so the whole set costs one install.
// That folder is the test run's (consumer-root-setup.ts): the first test file to ask installs
// it, the next ones reuse it, and the run's teardown removes it.
// Installs skip install scripts: nothing native is built, so the consumers use PostgreSQL (a
// PostgreSQL-only install must not need better-sqlite3).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { inject } from "vitest";
import { repoRoot, tempDir } from "../helpers/temp.ts";

const ownPackage = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** What the consumers install beside the tarball: this repo's versions where it has them. */
const consumerDependencies = {
  express: ownPackage.devDependencies.express,
  fastify: ownPackage.devDependencies.fastify,
  typescript: ownPackage.devDependencies.typescript,
  "@types/node": ownPackage.devDependencies["@types/node"],
  hono: "4.13.19",
  "@hono/node-server": "2.1.8",
  next: "16.4.6",
  react: "19.3.1",
  "react-dom": "19.3.1",
  "@types/react": "19.3.0",
  // The Next.js + Prisma example (next-serverless.test.ts).
  prisma: ownPackage.devDependencies.prisma,
  "@prisma/client": ownPackage.devDependencies["@prisma/client"],
  "@prisma/adapter-pg": ownPackage.devDependencies["@prisma/adapter-pg"],
  pg: ownPackage.dependencies.pg,
};

export interface ConsumerRoot {
  /** The folder holding node_modules and one folder per consumer (copied from fixtures/). */
  readonly dir: string;
  readonly tarball: string;
  readonly tarballBytes: number;
  cleanup(): void;
}

/** `npm install --ignore-scripts --prefer-offline` of `specs` in `dir`. */
export function npmInstall(dir: string, specs: readonly string[]): void {
  execFileSync(
    "npm",
    ["install", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", ...specs],
    { cwd: dir, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, CI: "true" } },
  );
}

/** The packed tarball: from HOOKINBOX_PACKED when set, else packed now (prepack builds dist/). */
export function packedTarball(into: string): string {
  const packed = process.env.HOOKINBOX_PACKED;
  if (packed) {
    const found = readdirSync(packed).find((f) => /^hookinbox-.*\.tgz$/.test(f));
    if (found) return join(packed, found);
  }
  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", into], {
    cwd: repoRoot,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  const [{ filename }] = JSON.parse(out.slice(out.indexOf("["))) as [{ filename: string }];
  return join(into, filename);
}

/**
 * Runs `work` while holding `dir`'s install lock (a folder: mkdir is atomic), so that two test
 * files running at once (the "paired" project) neither install nor copy fixtures over each other.
 */
function whileLocked<T>(dir: string, work: () => T): T {
  const lock = join(dir, "install.lock");
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + 600_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (Date.now() > deadline) throw new Error(`consumer root: ${lock} held for 10 minutes`);
      Atomics.wait(pause, 0, 0, 250);
    }
  }
  try {
    return work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Packs (or finds) the tarball and installs it with every consumer's framework into the run's
 * consumer folder, unless an earlier test file of this run already did.
 */
export function installConsumerRoot(): ConsumerRoot {
  const shared = inject("consumerRootDir");
  const tmp = shared ? { dir: shared, cleanup: () => {} } : tempDir("hookinbox-consumers-");
  const marker = join(tmp.dir, "installed.json");
  const tarball = whileLocked(tmp.dir, () => {
    if (existsSync(marker)) {
      console.log(`consumer root: reusing this run's install in ${tmp.dir}`);
      return (JSON.parse(readFileSync(marker, "utf8")) as { tarball: string }).tarball;
    }
    const packed = packedTarball(tmp.dir);
    writeFileSync(join(tmp.dir, "package.json"), '{ "name": "consumers", "private": true }\n');
    npmInstall(tmp.dir, [
      packed,
      ...Object.entries(consumerDependencies).map(([name, version]) => `${name}@${version}`),
    ]);
    writeFileSync(marker, JSON.stringify({ tarball: packed }));
    cpSync(join(repoRoot, "test/package/fixtures"), tmp.dir, { recursive: true });
    return packed;
  });
  return { dir: tmp.dir, tarball, tarballBytes: statSync(tarball).size, cleanup: tmp.cleanup };
}

/** A port free on 127.0.0.1 now (for servers that take no port 0, as `next start`). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A consumer's server process, started and ready on `port`. */
export interface ConsumerProcess {
  readonly port: number;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
  /** SIGKILL: no shutdown of any kind (what a crash or a platform's hard stop does). */
  kill(): Promise<void>;
}

/**
 * Starts `command` in `cwd` and waits until its output matches `ready` (whose first group, when
 * there is one, is the port it listens on; else `port`).
 */
export function startConsumer(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; ready: RegExp; port?: number },
): Promise<ConsumerProcess> {
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // SIGTERM (each consumer closes its server and inbox), then SIGKILL if it lingers 10 s.
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const lingering = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(lingering);
  };
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await exited;
  };
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = options.ready.exec(output);
      if (!match) return;
      const port = match[1] ? Number(match[1]) : options.port;
      if (port === undefined) reject(new Error(`${command}: ready without a port`));
      else resolve({ port, output: () => output, stop, kill });
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`${command} ${args.join(" ")} exited (${code}) before ready:\n${output}`)),
    );
  });
}
