import { fileURLToPath } from "node:url";
import type Database from "better-sqlite3";
import { loadMigrations, type Migration } from "../core/migrations.ts";
import type { MigrationReport } from "../types.ts";

/** One numbered migration file (see `Migration`). */
export type SqliteMigration = Migration;

const defaultFolder = fileURLToPath(new URL("./migrations/", import.meta.url));

/**
 * The SQLite migrations of a folder (default: the store's own), in order, gap-checked.
 *
 * @example
 * ```ts
 * loadSqliteMigrations().map((m) => m.name); // ["001_receipts_events", …]
 * ```
 */
export function loadSqliteMigrations(folder: string = defaultFolder): SqliteMigration[] {
  return loadMigrations(folder, "SQLite");
}

/**
 * Applies pending migrations to a SQLite connection and records each in `hookinbox_migrations`.
 *
 * Each migration runs in its own `BEGIN IMMEDIATE` transaction: the write lock is taken before the
 * applied list is read, so when two processes start at once the second waits (busy timeout), then
 * sees the first's rows and skips them. A migration that fails rolls back entirely and throws.
 * Idempotent: a second run applies nothing.
 *
 * @example
 * ```ts
 * const db = new Database("hookinbox.db");
 * migrateSqlite(db); // { applied: ["001_receipts_events"], current: 1 }
 * migrateSqlite(db); // { applied: [], current: 1 }
 * ```
 */
export function migrateSqlite(
  db: Database.Database,
  options: { migrations?: readonly SqliteMigration[]; now?: () => number } = {},
): MigrationReport {
  const migrations = options.migrations ?? loadSqliteMigrations();
  const now = options.now ?? Date.now;
  const applied: string[] = [];
  let current = 0;

  inImmediateTransaction(db, () => {
    db.exec(`CREATE TABLE IF NOT EXISTS hookinbox_migrations (
      id          INTEGER PRIMARY KEY,
      name        TEXT    NOT NULL,
      applied_at  INTEGER NOT NULL
    ) STRICT`);
  });

  for (const migration of migrations) {
    inImmediateTransaction(db, () => {
      const done = db.prepare("SELECT 1 FROM hookinbox_migrations WHERE id = ?").get(migration.id);
      if (done) return;
      db.exec(migration.sql);
      db.prepare("INSERT INTO hookinbox_migrations (id, name, applied_at) VALUES (?, ?, ?)").run(
        migration.id,
        migration.name,
        now(),
      );
      applied.push(migration.name);
    });
  }

  const row = db.prepare("SELECT max(id) AS current FROM hookinbox_migrations").get() as {
    current: number | null;
  };
  current = row.current ?? 0;
  return { applied, current };
}

function inImmediateTransaction(db: Database.Database, work: () => void): void {
  db.exec("BEGIN IMMEDIATE");
  try {
    work();
    db.exec("COMMIT");
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
