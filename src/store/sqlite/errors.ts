import { HookinboxError, hookinboxError } from "../../errors.ts";

/**
 * SQLite result codes that describe the database, not one statement's data: busy or locked by
 * another connection, disk full, read-only file, I/O error, corruption, out of memory. Retrying
 * items one by one after such an error cannot help and only multiplies the wait (a busy timeout
 * blocks the event loop once per attempt), so a batch failing this way fails as a whole.
 */
const databaseWide = [
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "SQLITE_FULL",
  "SQLITE_READONLY",
  "SQLITE_IOERR",
  "SQLITE_CORRUPT",
  "SQLITE_NOTADB",
  "SQLITE_CANTOPEN",
  "SQLITE_NOMEM",
  "SQLITE_PROTOCOL",
  "SQLITE_PERM",
];

/**
 * Tells whether an error is about the whole database (see `databaseWide`) rather than one item.
 *
 * @example
 * ```ts
 * isDatabaseWideError(Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" })); // true
 * ```
 */
export function isDatabaseWideError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") {
    return databaseWide.some((prefix) => code === prefix || code.startsWith(`${prefix}_`));
  }
  // better-sqlite3 throws a TypeError once the connection is closed.
  return error instanceof TypeError && /database connection is not open/i.test(error.message);
}

/**
 * Wraps any error from SQLite as HOOKINBOX_STORE_UNAVAILABLE (cause attached), keeping existing
 * HookinboxErrors as they are. The detail names the SQLite code, never data.
 *
 * @example
 * ```ts
 * try { db.exec("COMMIT") } catch (e) { throw storeUnavailable(e) }
 * ```
 */
export function storeUnavailable(error: unknown, detail?: string): HookinboxError {
  if (error instanceof HookinboxError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const reason = detail ?? (typeof code === "string" ? code : "SQLite error");
  return hookinboxError("HOOKINBOX_STORE_UNAVAILABLE", reason, error);
}

/**
 * Wraps an error from preparing statements as HOOKINBOX_STORE_UNAVAILABLE, saying "run migrate()
 * first" when a table is missing (the schema was never migrated).
 *
 * @example
 * ```ts
 * try { ops = prepareWriteOps(db, group) } catch (e) { throw prepareFailed(e) }
 * ```
 */
export function prepareFailed(error: unknown): HookinboxError {
  return storeUnavailable(
    error,
    /no such table/i.test(String((error as Error | null)?.message))
      ? "schema is missing; run migrate() first"
      : undefined,
  );
}

/** Errors thrown by a handler's own work inside `ctx.transaction` (its SQL included). */
const handlerErrors = new WeakSet<object>();

/**
 * Runs a handler's transaction work, marking whatever it throws as the handler's own, so that
 * `no such table: credits` is reported as itself (message and SQLite code) and retried as a
 * handler failure, never mistaken for the store being unavailable.
 *
 * @example
 * ```ts
 * await writer.exclusive(input, asHandlerWork(work));
 * ```
 */
export function asHandlerWork<A, T>(work: (arg: A) => Promise<T>): (arg: A) => Promise<T> {
  return async (arg) => {
    try {
      return await work(arg);
    } catch (error) {
      if (typeof error === "object" && error !== null) handlerErrors.add(error);
      throw error;
    }
  };
}

/**
 * Whether an error came from a handler's own work (see `asHandlerWork`).
 *
 * @example
 * ```ts
 * if (isHandlerError(error)) throw error; // not HOOKINBOX_STORE_UNAVAILABLE
 * ```
 */
export function isHandlerError(error: unknown): boolean {
  return typeof error === "object" && error !== null && handlerErrors.has(error);
}
