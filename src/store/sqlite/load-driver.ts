import { createRequire } from "node:module";
import type Database from "better-sqlite3";
import { hookinboxError } from "../../errors.ts";

let driver: typeof Database | undefined;

/**
 * Loads better-sqlite3 on first use, so that a PostgreSQL-only install never needs it (it is an
 * optional peer dependency: a native module compiled at install time where no prebuilt binary
 * fits). Missing or unloadable: HOOKINBOX_SQLITE_DRIVER_MISSING, saying how to install it.
 *
 * @example
 * ```ts
 * const Database = loadSqliteDriver();
 * const db = new Database("./.hookinbox/hookinbox.db");
 * ```
 */
export function loadSqliteDriver(): typeof Database {
  if (driver) return driver;
  try {
    driver = createRequire(import.meta.url)("better-sqlite3") as typeof Database;
    return driver;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const missing = code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND";
    throw hookinboxError(
      "HOOKINBOX_SQLITE_DRIVER_MISSING",
      missing
        ? 'sqlite: stores need the better-sqlite3 package; run "npm install better-sqlite3@12" (or use a postgres:// store)'
        : 'better-sqlite3 is installed but does not load on this Node.js; run "npm rebuild better-sqlite3"',
      error,
    );
  }
}
