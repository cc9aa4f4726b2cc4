// A real PgBouncer in transaction mode in front of the test PostgreSQL, for the `pgbouncer` store
// variant (test/helpers/stores.ts). Debian's `pgbouncer` package; installed with apt-get when
// missing and the run is root. Where it cannot be installed, the variant is left out with a loud
// message (never silently).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const candidates = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer"];

function findBinary(): string | null {
  const found = candidates.find((path) => existsSync(path));
  if (found) return found;
  const which = spawnSync("which", ["pgbouncer"], { encoding: "utf8" });
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : null;
}

/** Finds `pgbouncer`, installing Debian's package when missing (root and apt-get only). */
function pgbouncerBinary(): { path: string } | { reason: string } {
  const found = findBinary();
  if (found) return { path: found };
  if (process.getuid?.() !== 0 || !existsSync("/usr/bin/apt-get"))
    return { reason: "pgbouncer is not installed (install Debian's `pgbouncer` package)" };
  process.stderr.write("installing pgbouncer (apt-get) for the PgBouncer test variant…\n");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const run = (args: string[]) =>
    spawnSync("apt-get", args, { env, encoding: "utf8", timeout: 300_000 });
  run(["update", "-qq"]);
  const install = run(["install", "-y", "-qq", "--no-install-recommends", "pgbouncer"]);
  const installed = findBinary();
  if (installed) return { path: installed };
  return {
    reason: `apt-get install pgbouncer failed: ${(install.stderr || install.stdout || "").trim().split("\n").pop()}`,
  };
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** The OS user PgBouncer runs as when the tests run as root (it refuses to run as root). */
function unprivilegedUser(): string {
  return spawnSync("id", ["-u", "postgres"]).status === 0 ? "postgres" : "nobody";
}

/**
 * Starts PgBouncer (transaction mode) on `port` in front of `serverUrl`'s server. Any database
 * name is forwarded to the same-named database (`*`), logging in as `serverUrl`'s user.
 */
export async function startPgBouncer(
  serverUrl: string,
  port: number,
): Promise<{ url: string; stop(): Promise<void> } | { reason: string }> {
  const binary = pgbouncerBinary();
  if ("reason" in binary) return binary;
  const server = new URL(serverUrl);
  const dir = mkdtempSync(join(tmpdir(), "hookinbox-pgbouncer-"));
  chmodSync(dir, 0o755);
  const login = [
    `host=${server.hostname || "127.0.0.1"}`,
    `port=${server.port || "5432"}`,
    `user=${decodeURIComponent(server.username || "postgres")}`,
    ...(server.password ? [`password=${decodeURIComponent(server.password)}`] : []),
  ].join(" ");
  const config = join(dir, "pgbouncer.ini");
  writeFileSync(
    config,
    `[databases]
* = ${login}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = any
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 20
ignore_startup_parameters = extra_float_digits
server_check_delay = 0
log_connections = 0
log_disconnections = 0
`,
    { mode: 0o644 },
  );
  const args = process.getuid?.() === 0 ? ["-u", unprivilegedUser(), config] : [config];
  const child: ChildProcess = spawn(binary.path, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const deadline = Date.now() + 15_000;
  while (!(await portOpen(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
      return { reason: `pgbouncer did not start: ${stderr.trim().split("\n").pop() ?? ""}` };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `postgres://hookinbox@127.0.0.1:${port}/postgres`,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
