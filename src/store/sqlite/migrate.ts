import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type Database from "better-sqlite3";
import type { MigrationReport } from "../types.ts";

/**
 * One numbered migration file.
 *
 * @example
 * ```ts
 * const m: SqliteMigration = { id: 1, name: "001_receipts_events", sql: "CREATE TABLE …" };
 * ```
 */
export interface SqliteMigration {
  readonly id: number;
  readonly name: string;
  readonly sql: string;
}

const defaultFolder = fileURLToPath(new URL("./migrations/", import.meta.url));
const fileName = /^(\d+)_[A-Za-z0-9_-]+\.sql$/;

/**
 * Reads the numbered `.sql` files of a folder, in order. Numbers must be unique and start at 1
 * with no gaps, so a missing or doubled file fails loudly instead of skipping schema.
 *
 * @example
 * ```ts
 * const migrations = loadSqliteMigrations(); // the store's own migrations folder
 * console.log(migrations.map((m) => m.name)); // ["001_receipts_events"]
 * ```
 */
export function loadSqliteMigrations(folder: string = defaultFolder): SqliteMigration[] {
  const migrations = readdirSync(folder)
    .flatMap((file) => {
      const match = fileName.exec(file);
      if (!match?.[1]) return [];
      return [
        {
          id: Number(match[1]),
          name: file.slice(0, -".sql".length),
          sql: readFileSync(`${folder}/${file}`, "utf8"),
        },
      ];
    })
    .sort((a, b) => a.id - b.id);
  migrations.forEach((migration, index) => {
    if (migration.id !== index + 1) {
      throw new Error(
        `SQLite migrations must be numbered 1, 2, 3… without gaps or repeats; found ${migration.name} at position ${index + 1}`,
      );
    }
  });
  return migrations;
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
