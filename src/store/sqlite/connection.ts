import { mkdirSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import type Database from "better-sqlite3";
import { HookinboxError, hookinboxError } from "../../errors.ts";
import { loadSqliteDriver } from "./load-driver.ts";

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "error";
}

/** Kernel filesystems where a database file can never live (opening one may even block). */
const virtualFilesystems = ["/proc", "/sys", "/dev"];

/**
 * The absolute path of a store file, refused early where it cannot work: under a virtual
 * filesystem, or relative to a working folder that was deleted (where Node's recursive mkdir
 * never returns).
 */
function usablePath(path: string): string {
  let absolute = path;
  if (!isAbsolute(path)) {
    try {
      absolute = resolve(process.cwd(), path);
    } catch {
      throw hookinboxError(
        "HOOKINBOX_CWD_MISSING",
        `the store path ${path} is relative to it; cd to an existing folder and run again`,
      );
    }
  }
  const top = virtualFilesystems.find(
    (root) => absolute === root || absolute.startsWith(`${root}/`),
  );
  if (top) {
    throw hookinboxError(
      "HOOKINBOX_STORE_PATH_UNUSABLE",
      `${absolute} is on a virtual filesystem (${top}); point store at a folder on a disk`,
    );
  }
  return absolute;
}

function isBusy(error: unknown): boolean {
  return errorCode(error).startsWith("SQLITE_BUSY");
}

/** Blocks this thread for `ms` (the driver is synchronous; so is opening a store). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Switches a fresh file to WAL, retrying SQLITE_BUSY until the busy timeout has passed. SQLite
 * skips the busy handler where waiting could deadlock: when several processes open one new file
 * at once, each holds a shared lock and wants the exclusive one to rewrite the header, and all
 * but one get SQLITE_BUSY at once. They retry after a short random pause, by which time the first
 * has switched the file (the pragma then only reads it).
 */
function switchToWal(db: Database.Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
      sleepSync(5 + Math.floor(Math.random() * 20));
    }
  }
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
  const file = memory ? path : usablePath(path);
  let db: Database.Database | undefined;
  try {
    if (!memory) mkdirSync(dirname(file), { recursive: true });
    // `timeout` is SQLite's busy timeout, set before the first pragma so that switching to WAL
    // waits for a concurrent opener; where SQLite skips that wait, switchToWal retries.
    db = new Driver(file, { timeout: busyTimeoutMs });
    switchToWal(db, busyTimeoutMs);
    // Durability: in WAL mode `synchronous = NORMAL` does not fsync the WAL at each commit (only
    // at checkpoints), so a commit already acknowledged to a provider with a 2xx could vanish on
    // power failure. FULL fsyncs the WAL at every COMMIT, which is what "a 2xx means the event is
    // on disk" requires. The cost (one fsync per transaction) is shared by the group commit.
    db.pragma("synchronous = FULL");
    db.pragma("foreign_keys = ON");
    return db;
  } catch (error) {
    db?.close();
    if (error instanceof HookinboxError) throw error;
    throw hookinboxError(
      "HOOKINBOX_STORE_PATH_UNUSABLE",
      `${file} (${errorCode(error)}); make sure its folder exists or can be created and is writable, or point store elsewhere`,
      error,
    );
  }
}
