import type pg from "pg";
import { loadMigrations, type Migration } from "../core/migrations.ts";
import type { MigrationReport } from "../types.ts";
import { withTransaction } from "./connection.ts";
import { schemaNames } from "./schema-names.ts";

const folder = new URL("./migrations/", import.meta.url);

/**
 * The numbered migrations shipped with hookinbox, in order, gap-checked like SQLite's.
 *
 * @example
 * ```ts
 * loadPostgresMigrations().at(-1)?.name; // the newest, e.g. "008_payload_purge"
 * ```
 */
export function loadPostgresMigrations(): Migration[] {
  return loadMigrations(folder, "PostgreSQL");
}

/**
 * Applies pending migrations in one transaction under a transaction-scoped advisory lock, so that
 * N processes starting at once apply each migration exactly once (the others wait, then find
 * nothing to do), an upgrade lands whole or not at all, and it works through a transaction-mode
 * pooler (no session lock, no session state). Migration files use bare names: they run with
 * `SET LOCAL search_path` set to the store's schema, which ends with the transaction, so the
 * connection goes back to the pool with the database's default path.
 *
 * @example
 * ```ts
 * const report = await migratePostgres(pool, "hookinbox");
 * ```
 */
export async function migratePostgres(pool: pg.Pool, schema: string): Promise<MigrationReport> {
  const t = schemaNames(schema);
  // One transaction: an upgrade lands whole or not at all.
  return withTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 7030))", [
      `hookinbox-migrate:${schema}`,
    ]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${t.schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${t.hookinbox_migrations} (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = new Set(
      (await client.query<{ id: number }>(`SELECT id FROM ${t.hookinbox_migrations}`)).rows.map(
        (r) => r.id,
      ),
    );
    const applied: string[] = [];
    let current = Math.max(0, ...done);
    const pending = loadPostgresMigrations().filter((m) => !done.has(m.id));
    if (pending.length > 0) await client.query(`SET LOCAL search_path TO ${t.schema}`);
    for (const migration of pending) {
      await client.query(migration.sql);
      await client.query(`INSERT INTO ${t.hookinbox_migrations} (id, name) VALUES ($1, $2)`, [
        migration.id,
        migration.name,
      ]);
      applied.push(migration.name);
      current = migration.id;
    }
    return { applied, current };
  });
}
