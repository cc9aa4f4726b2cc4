import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type Database from "better-sqlite3";
import { loadSqliteDriver } from "./load-driver.ts";
import { storeUnavailable } from "./sqlite-errors.ts";

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "error";
}

/**
 * Opens the store's connection: WAL, `synchronous = FULL`, a busy timeout and foreign keys.
 *
 * @example
 * ```ts
 * const db = openConnection("./.hookinbox/hookinbox.db", 5000);
 * ```
 */
export function openConnection(path: string, busyTimeoutMs: number): Database.Database {
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new RangeError(`busyTimeoutMs must be an integer ≥ 0, got ${busyTimeoutMs}`);
  }
  const Driver = loadSqliteDriver();
  const memory = path === ":memory:";
  let db: Database.Database | undefined;
  try {
    if (!memory) mkdirSync(dirname(path), { recursive: true });
    // `timeout` is SQLite's busy timeout; it is set before the first pragma so that even switching
    // to WAL waits for a concurrent opener instead of failing with SQLITE_BUSY.
    db = new Driver(path, { timeout: busyTimeoutMs });
    db.pragma("journal_mode = WAL");
    // Durability: in WAL mode `synchronous = NORMAL` does not fsync the WAL at each commit (only
    // at checkpoints), so a commit already acknowledged to a provider with a 2xx could vanish on
    // power failure. FULL fsyncs the WAL at every COMMIT, which is what "a 2xx means the event is
    // on disk" requires. The cost (one fsync per transaction) is shared by the group commit.
    db.pragma("synchronous = FULL");
    db.pragma("foreign_keys = ON");
    return db;
  } catch (error) {
    db?.close();
    throw storeUnavailable(error, `cannot open SQLite database (${errorCode(error)})`);
  }
}
