import type Database from "better-sqlite3";
import { HookinboxError, hookinboxError } from "../../errors.ts";
import { coreStore, type StoreDriver } from "../core/core-store.ts";
import type { ProgramOutput } from "../core/program-writes.ts";
import type { MigrationReport, Store } from "../types.ts";
import { openConnection } from "./connection.ts";
import { asHandlerWork, isHandlerError, prepareFailed, storeUnavailable } from "./errors.ts";
import { type CommitInfo, GroupCommit } from "./group-commit.ts";
import { prepareRows } from "./run-statements.ts";
import { startThreadWriter } from "./thread-writer.ts";
import type { WriteOp, WriteOps } from "./write-ops.ts";
import { inlineWriter, type SqliteWriter } from "./writer.ts";

/**
 * Options of `openSqliteStore`.
 *
 * @example
 * ```ts
 * const options: SqliteStoreOptions = { path: "./.hookinbox/hookinbox.db", busyTimeoutMs: 2000 };
 * ```
 */
export interface SqliteStoreOptions {
  /** Database file (parent folders are created), or ":memory:" (not durable: tests only). */
  readonly path: string;
  /**
   * How long a write waits for a lock held by another connection before failing with
   * HOOKINBOX_STORE_UNAVAILABLE (ms, default 5000). better-sqlite3 waits synchronously, so the
   * event loop is blocked for up to this long.
   */
  readonly busyTimeoutMs?: number;
  /** Clock for ids and the heartbeat (ms since the epoch). Default `Date.now`. */
  readonly now?: () => number;
  /** Most units of work per group transaction (default 512). */
  readonly maxBatch?: number;
  /** Called after every COMMIT with its size and duration (inline writer only). */
  readonly onCommit?: (info: CommitInfo) => void;
  /**
   * `inline` (default): writes run on the caller's thread. `thread`: a writer thread owns the
   * writing connection, so statement execution and the fsync of each COMMIT no longer block the
   * event loop (the gateway uses it). Not available for ":memory:".
   */
  readonly writer?: "inline" | "thread";
  /** Append every new event to the audit log in its accept transaction (default true). */
  readonly audit?: boolean;
}

/**
 * Counters of a SQLite store since it was opened.
 *
 * @example
 * ```ts
 * const { commits, accepted } = store.stats();
 * console.log(`mean batch ${(accepted / Math.max(commits, 1)).toFixed(1)}`);
 * ```
 */
export interface SqliteStoreStats {
  /** Write transactions committed by the group commit (accepts, rejections, pings). */
  readonly commits: number;
  /** Accepts that resolved (new events and duplicates). */
  readonly accepted: number;
  /** Accepts that resolved as duplicates. */
  readonly duplicates: number;
  /** Rejections recorded. */
  readonly rejections: number;
  /** The most units ever committed in one transaction. */
  readonly largestBatch: number;
}

/**
 * The embedded SQLite store: a `Store` plus diagnostics.
 *
 * @example
 * ```ts
 * const store: SqliteStore = openSqliteStore({ path: "hookinbox.db" });
 * await store.migrate();
 * store.pragmas().synchronous; // 2 (FULL)
 * ```
 */
export interface SqliteStore extends Store {
  readonly kind: "sqlite";
  /** The database file path as given. */
  readonly path: string;
  /** Counters since open: commits vs. accepts shows how well group commit batches. */
  stats(): SqliteStoreStats;
  /** The durability settings of the store's own connection, read back from SQLite (diagnostics). */
  pragmas(): SqlitePragmas;
}

/**
 * Connection settings as SQLite reports them.
 *
 * @example
 * ```ts
 * store.pragmas(); // { journalMode: "wal", synchronous: 2, busyTimeoutMs: 5000, foreignKeys: true }
 * ```
 */
export interface SqlitePragmas {
  /** "wal" for a file database ("memory" for ":memory:"). */
  readonly journalMode: string;
  /** 2 = FULL: the WAL is fsynced at every commit. */
  readonly synchronous: number;
  readonly busyTimeoutMs: number;
  readonly foreignKeys: boolean;
}

/**
 * Opens (creating if needed) a SQLite database as a hookinbox Store. Call `migrate()` before use.
 *
 * The connection uses WAL and `synchronous = FULL`, a busy timeout and foreign keys; writes go
 * through a group commit so concurrent accepts share one transaction and one fsync.
 * Throws HOOKINBOX_STORE_UNAVAILABLE when the file cannot be opened.
 *
 * @example
 * ```ts
 * const store = openSqliteStore({ path: "./.hookinbox/hookinbox.db" });
 * await store.migrate();
 * const { eventId, duplicate } = await store.accept(input); // resolves after a durable commit
 * await store.close();
 * ```
 */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const now = options.now ?? Date.now;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const threaded = options.writer === "thread" && options.path !== ":memory:";
  // Reads always run on this thread; with the inline writer this one connection also writes.
  let readDb: Database.Database | null = threaded
    ? null
    : openConnection(options.path, busyTimeoutMs);
  let writer: SqliteWriter | null = threaded
    ? null
    : inlineWriter(
        readDb!,
        new GroupCommit(readDb!, {
          ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }),
          ...(options.onCommit === undefined ? {} : { onCommit: options.onCommit }),
        }),
        now,
      );
  const writerReady: Promise<SqliteWriter> = writer
    ? Promise.resolve(writer)
    : startThreadWriter({
        path: options.path,
        busyTimeoutMs,
        ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }),
      });
  writerReady.catch(() => undefined);
  let cachedPragmas: SqlitePragmas | null = null;

  // `released` is set once core's close() has let the work under way settle and the
  // connections are being released.
  let released = false;
  const audit = options.audit ?? true;
  let reads: ReadOperations | undefined;

  /** Read statements are prepared once, on first use after the schema exists. */
  function readOperations(): ReadOperations {
    if (released) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
    if (reads) return reads;
    if (!readDb)
      throw hookinboxError("HOOKINBOX_STORE_UNAVAILABLE", "schema is missing; run migrate() first");
    const db = readDb;
    try {
      reads = {
        rows: prepareRows(db),
      };
    } catch (error) {
      throw prepareFailed(error);
    }
    return reads;
  }

  /** Maps SQLite failures to HOOKINBOX_STORE_UNAVAILABLE, keeping hookinbox's own errors. */
  async function mapErrors<T>(promise: Promise<T>): Promise<T> {
    try {
      return await promise;
    } catch (error) {
      if (error instanceof HookinboxError || isHandlerError(error)) throw error;
      if (
        typeof (error as { code?: unknown })?.code === "string" &&
        String((error as { code: string }).code).startsWith("SQLITE")
      ) {
        throw storeUnavailable(error);
      }
      throw error;
    }
  }

  async function currentWriter(): Promise<SqliteWriter> {
    if (released) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
    writer ??= await writerReady;
    return writer;
  }

  /**
   * Runs a named write operation inside the next group commit. With a writer at hand it is
   * submitted synchronously, so work submitted before close() is still committed by it.
   */
  function write<K extends WriteOp>(
    op: K,
    ...args: Parameters<WriteOps[K]>
  ): Promise<ReturnType<WriteOps[K]>> {
    if (released) return Promise.reject(hookinboxError("HOOKINBOX_STORE_CLOSED"));
    if (writer) return mapErrors(writer.run(op, ...args));
    return currentWriter().then((w) => mapErrors(w.run(op, ...args)));
  }

  /** Runs a synchronous read, mapping SQLite failures to HOOKINBOX_STORE_UNAVAILABLE. */
  async function read<T>(run: (current: ReadOperations) => T): Promise<T> {
    const current = readOperations();
    try {
      return run(current);
    } catch (error) {
      throw storeUnavailable(error);
    }
  }

  // The primitives core's Store runs on (core/core-store.ts): reads on the reading connection,
  // every write inside the group commit (on the writer thread when there is one).
  const driver: StoreDriver = {
    dialect: "sqlite",
    table: (name) => name,
    audit,
    now,
    rows: (statement) => read((current) => current.rows(statement)),
    execute: (statements) => write("statements", statements),
    insertOrGetEvent: (plan) => write("insertOrGetEvent", plan),
    insertRows: (_ids, statements) => write("statements", statements),
    runClaimPlan: (plan) => write("claimPlan", plan),
    runEndPlans: (plans) => write("endPlans", plans),
    // The handler's SQL and the delivery's end commit together or not at all.
    runEndPlanWith: async (plan, work) =>
      mapErrors((await currentWriter()).exclusive(plan, asHandlerWork(work))),
    runProgram: (name, input) =>
      write("program", name, input) as Promise<ProgramOutput<typeof name>>,
    runRetentionProgram: (program) => write("retentionProgram", program),
    // Workers share this process: nothing to wake elsewhere.
    notifyDeliveries: async () => undefined,
    // One writer appends inside the accept's own transaction: nothing is ever pending.
    appends: "inline",
    partitioned: false,
    healSchema: (work) => work(),

    async migrate(): Promise<MigrationReport> {
      const w = await mapErrors(currentWriter());
      let report: MigrationReport;
      try {
        report = await w.migrate();
      } catch (error) {
        throw storeUnavailable(error, `migration failed (${errorCode(error)})`);
      }
      readDb ??= openConnection(options.path, busyTimeoutMs);
      if (!threaded) optimize(readDb, "0x10002");
      cachedPragmas = {
        journalMode: String(await w.pragma("journal_mode")),
        synchronous: Number(await w.pragma("synchronous")),
        busyTimeoutMs: Number(await w.pragma("busy_timeout")),
        foreignKeys: Number(await w.pragma("foreign_keys")) === 1,
      };
      return report;
    },

    async release(): Promise<void> {
      released = true;
      try {
        const w = await writerReady.catch(() => null);
        await w?.close(); // commits what was already submitted, then refuses new work
        if (readDb && !threaded) optimize(readDb);
      } finally {
        readDb?.close();
      }
    },
  };
  const { acceptCounters, ...store } = coreStore(driver);

  return {
    ...store,
    kind: "sqlite",
    path: options.path,

    stats(): SqliteStoreStats {
      const counters = writer?.counters() ?? { commits: 0, largestBatch: 0 };
      return {
        commits: counters.commits,
        ...acceptCounters(),
        largestBatch: counters.largestBatch,
      };
    },

    pragmas(): SqlitePragmas {
      if (released) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
      if (!threaded && readDb) {
        return {
          journalMode: String(readDb.pragma("journal_mode", { simple: true })),
          synchronous: Number(readDb.pragma("synchronous", { simple: true })),
          busyTimeoutMs: Number(readDb.pragma("busy_timeout", { simple: true })),
          foreignKeys: Number(readDb.pragma("foreign_keys", { simple: true })) === 1,
        };
      }
      if (!cachedPragmas)
        throw hookinboxError("HOOKINBOX_STORE_UNAVAILABLE", "run migrate() first");
      return cachedPragmas;
    },
  };
}

interface ReadOperations {
  rows: ReturnType<typeof prepareRows>;
}

/**
 * `PRAGMA optimize` keeps the planner's statistics fresh (SQLite's advice for long-lived
 * connections: `0x10002` once at start, plain `optimize` before closing), so that filters combined
 * in ways no index matches exactly pick the most selective index. Best effort: never fails a call.
 */
function optimize(db: Database.Database, mask?: string): void {
  try {
    db.pragma(mask === undefined ? "optimize" : `optimize = ${mask}`);
  } catch {
    // Statistics are an optimisation; a busy or read-only database keeps the old ones.
  }
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "error";
}
