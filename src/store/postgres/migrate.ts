import { readdirSync, readFileSync } from "node:fs";
import type pg from "pg";
import type { MigrationReport } from "../types.ts";

const folder = new URL("./migrations/", import.meta.url);

/** The numbered migrations shipped with hookinbox, in order. */
export function loadPostgresMigrations(): Array<{ id: number; name: string; sql: string }> {
  return readdirSync(folder)
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .sort()
    .map((name) => ({
      id: Number(name.slice(0, 3)),
      name: name.replace(/\.sql$/, ""),
      sql: readFileSync(new URL(name, folder), "utf8"),
    }));
}

/**
 * Applies pending migrations under a session advisory lock, so that N processes starting at once
 * apply each migration exactly once (the others wait, then find nothing to do). Each migration
 * runs in its own transaction with its bookkeeping row.
 *
 * @example
 * ```ts
 * const report = await migratePostgres(pool, "hookinbox");
 * ```
 */
export async function migratePostgres(pool: pg.Pool, schema: string): Promise<MigrationReport> {
  const client = await pool.connect();
  // A checked-out client has no pool error listener: without this one, a connection that dies
  // during migration would crash the process instead of failing the migration.
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on("error", onError);
  try {
    await client.query("SELECT pg_advisory_lock(hashtextextended($1, 7030))", [
      `hookinbox-migrate:${schema}`,
    ]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(`SET search_path TO ${schema}`);
      await client.query(
        "CREATE TABLE IF NOT EXISTS hookinbox_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      const done = new Set(
        (await client.query<{ id: number }>("SELECT id FROM hookinbox_migrations")).rows.map(
          (r) => r.id,
        ),
      );
      const applied: string[] = [];
      let current = Math.max(0, ...done);
      for (const migration of loadPostgresMigrations()) {
        if (done.has(migration.id)) continue;
        await client.query("BEGIN");
        try {
          await client.query(migration.sql);
          await client.query("INSERT INTO hookinbox_migrations (id, name) VALUES ($1, $2)", [
            migration.id,
            migration.name,
          ]);
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw error;
        }
        applied.push(migration.name);
        current = migration.id;
      }
      return { applied, current };
    } finally {
      await client
        .query("SELECT pg_advisory_unlock(hashtextextended($1, 7030))", [
          `hookinbox-migrate:${schema}`,
        ])
        .catch(() => undefined);
    }
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}
