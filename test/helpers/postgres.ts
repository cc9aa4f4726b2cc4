import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import pg from "pg";
import { inject } from "vitest";
import { loadPostgresMigrations } from "../../src/store/postgres/migrate.ts";

/** The PostgreSQL server of this test run (DATABASE_URL, or the embedded one). */
export function postgresServerUrl(): string {
  const url = inject("postgresUrl");
  if (!url) throw new Error("no PostgreSQL server: the global setup did not provide one");
  return url;
}

/**
 * PgBouncer (transaction mode) in front of the run's server, or "" where the global setup could not
 * start it (it said so loudly).
 */
export function pgbouncerServerUrl(): string {
  return inject("pgbouncerUrl") ?? "";
}

/** A URL to another database on the same server. */
export function databaseUrl(
  server: string,
  database: string,
  params: Record<string, string> = {},
): string {
  const url = new URL(server);
  url.pathname = `/${database}`;
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

/**
 * A fresh database for one test file (dropped by the returned cleanup), so test files never see
 * each other's rows. Each test inside may take its own schema with `schemaUrl`.
 */
export async function freshDatabase(
  options: {
    /** Copy the run's migrated template (hookinbox's schema up to date) instead of an empty one. */
    migrated?: boolean;
  } = {},
): Promise<{
  url: string;
  schemaUrl(): string;
  cleanup(): Promise<void>;
}> {
  const server = postgresServerUrl();
  const name = `hb_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  const template = options.migrated ? ` TEMPLATE ${inject("postgresTemplate")}` : "";
  await admin.query(`CREATE DATABASE ${name}${template}`);
  await admin.end();
  const url = databaseUrl(server, name);
  let schemas = 0;
  return {
    url,
    schemaUrl: () => databaseUrl(server, name, { schema: `s${++schemas}` }),
    async cleanup() {
      const drop = new pg.Client({ connectionString: server });
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await drop.end();
    },
  };
}

/** How many migrations the PostgreSQL store has (its numbered .sql files), for tests that count them. */
export const postgresMigrationCount = readdirSync(
  new URL("../../src/store/postgres/migrations/", import.meta.url),
).filter((name) => name.endsWith(".sql")).length;

/**
 * Creates `schema` and brings it to migration `upTo` by hand, as an older hookinbox left it, on
 * `pool` (one connection: its search_path stays on the schema, so the caller can add rows as that
 * version held them, then RESET it). `after(id)` runs after each migration, e.g. to add rows
 * that later migrations carry over.
 *
 * @example
 * ```ts
 * await migrateSchemaTo(pool, "s1", 8);
 * ```
 */
export async function migrateSchemaTo(
  pool: pg.Pool,
  schema: string,
  upTo: number,
  after: (id: number) => Promise<void> = async () => undefined,
): Promise<void> {
  await pool.query(`CREATE SCHEMA "${schema}"`);
  await pool.query(`SET search_path TO "${schema}"`);
  await pool.query(
    "CREATE TABLE hookinbox_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
  );
  for (const migration of loadPostgresMigrations().filter((m) => m.id <= upTo)) {
    await pool.query(migration.sql);
    await pool.query("INSERT INTO hookinbox_migrations (id, name) VALUES ($1, $2)", [
      migration.id,
      migration.name,
    ]);
    await after(migration.id);
  }
}
