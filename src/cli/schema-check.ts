import { existsSync } from "node:fs";
import { hookinboxError } from "../errors.ts";
import { parseStoreUrl } from "../store/open-store.ts";
import { createPool, parsePostgresUrl } from "../store/postgres/connection.ts";
import { explainStartupError, isSchemaMissing } from "../store/postgres/errors.ts";
import { loadPostgresMigrations } from "../store/postgres/migrate.ts";
import { schemaNames } from "../store/postgres/schema-names.ts";
import { loadSqliteDriver } from "../store/sqlite/load-driver.ts";
import { loadSqliteMigrations } from "../store/sqlite/migrate.ts";

/** How far a store's schema is: the newest migration applied and the newest shipped. */
export interface SchemaState {
  readonly current: number;
  readonly latest: number;
}

async function sqliteState(path: string): Promise<SchemaState> {
  const latest = loadSqliteMigrations().length;
  // Never create the file: a read-only command leaves a missing database missing.
  if (path === ":memory:" || !existsSync(path)) return { current: 0, latest };
  const Database = loadSqliteDriver();
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const table = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'hookinbox_migrations'")
      .get();
    if (!table) return { current: 0, latest };
    const row = db.prepare("SELECT max(id) AS id FROM hookinbox_migrations").get() as {
      id: number | null;
    };
    return { current: row.id ?? 0, latest };
  } finally {
    db.close();
  }
}

async function postgresState(text: string): Promise<SchemaState> {
  const latest = Math.max(0, ...loadPostgresMigrations().map((m) => m.id));
  const url = parsePostgresUrl(text);
  const pool = createPool(url, () => undefined, url.directUrl ?? url.connectionString, 1);
  try {
    const t = schemaNames(url.schema);
    const result = await pool.query<{ id: number | null }>(
      `SELECT max(id) AS id FROM ${t.hookinbox_migrations}`,
    );
    return { current: result.rows[0]?.id ?? 0, latest };
  } catch (error) {
    if (isSchemaMissing(error)) return { current: 0, latest };
    throw explainStartupError(error, url.directUrl ?? url.connectionString);
  } finally {
    await pool.end();
  }
}

/**
 * Reads how far the store's schema is, without changing anything (no file or schema is
 * created, no migration runs).
 *
 * @example
 * ```ts
 * await schemaState("sqlite:./.hookinbox/hookinbox.db"); // { current: 9, latest: 9 }
 * ```
 */
export function schemaState(storeUrl: string): Promise<SchemaState> {
  const parsed = parseStoreUrl(storeUrl);
  return parsed.kind === "sqlite" ? sqliteState(parsed.path) : postgresState(parsed.url);
}

/**
 * Fails with HOOKINBOX_SCHEMA_BEHIND unless the store is migrated to this hookinbox's newest
 * migration: read-only commands never migrate.
 *
 * @example
 * ```ts
 * await assertSchemaCurrent(url); // throws when `hookinbox migrate` has not run
 * ```
 */
export async function assertSchemaCurrent(storeUrl: string): Promise<void> {
  const { current, latest } = await schemaState(storeUrl);
  if (current >= latest) return;
  throw hookinboxError(
    "HOOKINBOX_SCHEMA_BEHIND",
    current === 0
      ? "the store has no hookinbox schema yet; run `hookinbox migrate`"
      : `the store is at migration ${current} of ${latest}; run \`hookinbox migrate\``,
  );
}
