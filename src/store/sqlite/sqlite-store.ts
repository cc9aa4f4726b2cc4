import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { HookinboxError, hookinboxError } from "../../errors.ts";
import type { CompleteInput, TransactionClient } from "../queue-types.ts";
import type {
  AcceptInput,
  AcceptResult,
  EventDetail,
  EventPage,
  EventQuery,
  MigrationReport,
  RejectionInput,
  Store,
} from "../types.ts";
import { prepareAccept } from "./accept.ts";
import { prepareGetEvent } from "./get-event.ts";
import { type CommitInfo, GroupCommit } from "./group-commit.ts";
import { prepareListEvents } from "./list-events.ts";
import { prepareListReceipts } from "./list-receipts.ts";
import { migrateSqlite } from "./migrate.ts";
import { preparePing } from "./ping.ts";
import { prepareClaimDeliveries } from "./queue/claim-deliveries.ts";
import { prepareCompleteDelivery } from "./queue/complete-delivery.ts";
import { prepareDeadLetterAlerts } from "./queue/dead-letter-alerts.ts";
import { prepareDeliveryViews } from "./queue/delivery-views.ts";
import { prepareEffects } from "./queue/effects.ts";
import { prepareFailDelivery } from "./queue/fail-delivery.ts";
import { prepareLeases } from "./queue/leases.ts";
import { prepareReplay } from "./queue/replay.ts";
import { prepareRetryDelivery } from "./queue/retry-delivery.ts";
import { prepareStuck } from "./queue/stuck.ts";
import { prepareRecordRejection } from "./record-rejection.ts";
import { storeUnavailable } from "./sqlite-errors.ts";
import { createTransactionClient } from "./transaction-client.ts";

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
  /** Called after every COMMIT with its size and duration, e.g. for a batch-size histogram. */
  readonly onCommit?: (info: CommitInfo) => void;
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
  const db = openConnection(options.path, options.busyTimeoutMs ?? 5000);
  const group = new GroupCommit(db, {
    ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }),
    ...(options.onCommit === undefined ? {} : { onCommit: options.onCommit }),
  });

  let closed = false;
  let accepted = 0;
  let duplicates = 0;
  let rejections = 0;
  let ops: Operations | undefined;

  /** Statements are prepared once, on first use after the schema exists. */
  function operations(): Operations {
    if (closed) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
    if (ops) return ops;
    try {
      ops = {
        accept: prepareAccept(db, now),
        recordRejection: prepareRecordRejection(db, now),
        ping: preparePing(db, now),
        listEvents: prepareListEvents(db),
        getEvent: prepareGetEvent(db),
        listReceipts: prepareListReceipts(db),
        claim: prepareClaimDeliveries(db),
        complete: prepareCompleteDelivery(db),
        fail: prepareFailDelivery(db),
        leases: prepareLeases(db),
        deliveries: prepareDeliveryViews(db),
        retry: prepareRetryDelivery(db),
        replay: prepareReplay(db),
        effects: prepareEffects(db),
        alerts: prepareDeadLetterAlerts(db),
        stuck: prepareStuck(db),
        nextDue: db.prepare<[], { at: number | null }>(
          "SELECT min(run_at) AS at FROM deliveries INDEXED BY deliveries_due WHERE status = 'pending'",
        ),
      };
    } catch (error) {
      throw storeUnavailable(
        error,
        /no such table/i.test(String((error as Error).message))
          ? "schema is missing; run migrate() first"
          : undefined,
      );
    }
    return ops;
  }

  /** Maps SQLite failures to HOOKINBOX_STORE_UNAVAILABLE, keeping hookinbox's own errors. */
  async function mapErrors<T>(promise: Promise<T>): Promise<T> {
    try {
      return await promise;
    } catch (error) {
      if (error instanceof HookinboxError) throw error;
      if (
        typeof (error as { code?: unknown })?.code === "string" &&
        String((error as { code: string }).code).startsWith("SQLITE")
      ) {
        throw storeUnavailable(error);
      }
      throw error;
    }
  }

  /** Runs a synchronous write inside the next group commit. */
  function write<T>(work: () => T): Promise<T> {
    return mapErrors(group.submit(work));
  }

  /** Runs a synchronous read, mapping SQLite failures to HOOKINBOX_STORE_UNAVAILABLE. */
  async function read<T>(run: (current: Operations) => T): Promise<T> {
    const current = operations();
    try {
      return run(current);
    } catch (error) {
      throw storeUnavailable(error);
    }
  }

  return {
    kind: "sqlite",
    path: options.path,

    async migrate(): Promise<MigrationReport> {
      if (closed) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
      let report: MigrationReport;
      try {
        report = migrateSqlite(db, { now });
      } catch (error) {
        throw storeUnavailable(error, `migration failed (${errorCode(error)})`);
      }
      optimize(db, "0x10002");
      return report;
    },

    async accept(input: AcceptInput): Promise<AcceptResult> {
      const { accept } = operations();
      const result = await group.submit(() => accept(input));
      accepted += 1;
      if (result.duplicate) duplicates += 1;
      return result;
    },

    async recordRejection(input: RejectionInput): Promise<void> {
      const { recordRejection } = operations();
      await group.submit(() => recordRejection(input));
      rejections += 1;
    },

    listEvents(query: EventQuery): Promise<EventPage> {
      return read((current) => current.listEvents(query));
    },

    getEvent(id: string): Promise<EventDetail | null> {
      return read((current) => {
        const event = current.getEvent(id);
        return event ? { ...event, deliveries: current.deliveries.ofEvent(id) } : null;
      });
    },

    listReceipts(query) {
      return read((current) => current.listReceipts(query));
    },

    // ---- processing (src/store/queue-types.ts) ----

    claimDeliveries(input) {
      const { claim } = operations();
      return write(() => claim(input));
    },

    extendLeases(workerId, ids, until) {
      const { leases } = operations();
      return write(() => leases.extend(workerId, ids, until));
    },

    async completeDelivery<T>(input: CompleteInput, work?: (tx: TransactionClient) => Promise<T>) {
      const { complete } = operations();
      if (!work) {
        await write(() => complete(input, "done"));
        return undefined;
      }
      // The handler's SQL and the delivery's completion commit together or not at all. The
      // lease is checked first so a worker that lost it runs none of its SQL.
      return mapErrors(
        group.exclusive(async () => {
          complete(input, "done");
          return work(createTransactionClient(db));
        }),
      );
    },

    failDelivery(input) {
      const { fail } = operations();
      return write(() => fail(input));
    },

    async markStale(input) {
      const { complete } = operations();
      await write(() => complete(input, "stale"));
    },

    releaseDeliveries(workerId, ids, at) {
      const { leases } = operations();
      return write(() => leases.release(workerId, ids, at));
    },

    rescueExpiredLeases(at) {
      const { leases } = operations();
      return write(() => leases.rescue(at));
    },

    nextDueAt() {
      return read((current) => current.nextDue.get()?.at ?? null);
    },

    listDeliveries(query) {
      return read((current) => current.deliveries.list(query));
    },

    async retryDelivery(id, at) {
      const current = operations();
      const found = await write(() => current.retry(id, at));
      return found ? current.deliveries.byId(id) : null;
    },

    async replayEvent(input) {
      const current = operations();
      const ids = await write(() => current.replay.one(input.eventId, input.targets, input.now));
      if (ids === null) throw hookinboxError("HOOKINBOX_EVENT_NOT_FOUND", input.eventId);
      return ids.map((deliveryId) => current.deliveries.byId(deliveryId)!);
    },

    async replayWhere(filter, { now: at, targetsFor, onProgress }) {
      const current = operations();
      let afterId = "";
      let events = 0;
      let deliveries = 0;
      // Bounded batches, each its own commit: a bulk replay never loads the table.
      for (;;) {
        const page = await read(() => current.replay.page(filter, afterId, 500));
        if (page.length === 0) break;
        deliveries += await write(() =>
          page.reduce((sum, e) => sum + current.replay.into(e, targetsFor(e), at).length, 0),
        );
        events += page.length;
        afterId = page[page.length - 1]!.id;
        onProgress?.(events);
      }
      return { events, deliveries };
    },

    countEvents(filter) {
      return read((current) => current.replay.count(filter));
    },

    claimEffect(input) {
      const { effects } = operations();
      return write(() => effects.claim(input));
    },

    async completeEffect(effectId, claimant, result, at) {
      const { effects } = operations();
      await write(() => effects.complete(effectId, claimant, result, at));
    },

    async releaseEffect(effectId, claimant) {
      const { effects } = operations();
      await write(() => effects.release(effectId, claimant));
    },

    resolveEffect(effectId, resolution, at, result) {
      const { effects } = operations();
      return write(() => effects.resolve(effectId, resolution, at, result));
    },

    listEffects(query) {
      return read((current) => current.effects.list(query));
    },

    pendingDeadLetterAlerts(limit) {
      return read((current) => current.alerts.pending(limit));
    },

    async markAlerted(ids, at) {
      const { alerts } = operations();
      await write(() => alerts.mark(ids, at));
    },

    stuck(input) {
      return read((current) => current.stuck(input));
    },

    async ping(): Promise<void> {
      const { ping } = operations();
      await group.submit(ping);
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      try {
        await group.close(); // commits what was already submitted, then refuses new work
        optimize(db);
      } finally {
        db.close();
      }
    },

    stats(): SqliteStoreStats {
      return {
        commits: group.commits,
        accepted,
        duplicates,
        rejections,
        largestBatch: group.largestBatch,
      };
    },

    pragmas(): SqlitePragmas {
      if (closed) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
      return {
        journalMode: String(db.pragma("journal_mode", { simple: true })),
        synchronous: Number(db.pragma("synchronous", { simple: true })),
        busyTimeoutMs: Number(db.pragma("busy_timeout", { simple: true })),
        foreignKeys: Number(db.pragma("foreign_keys", { simple: true })) === 1,
      };
    },
  };
}

interface Operations {
  listReceipts: ReturnType<typeof prepareListReceipts>;
  claim: ReturnType<typeof prepareClaimDeliveries>;
  complete: ReturnType<typeof prepareCompleteDelivery>;
  fail: ReturnType<typeof prepareFailDelivery>;
  leases: ReturnType<typeof prepareLeases>;
  deliveries: ReturnType<typeof prepareDeliveryViews>;
  retry: ReturnType<typeof prepareRetryDelivery>;
  replay: ReturnType<typeof prepareReplay>;
  effects: ReturnType<typeof prepareEffects>;
  alerts: ReturnType<typeof prepareDeadLetterAlerts>;
  stuck: ReturnType<typeof prepareStuck>;
  nextDue: Database.Statement<[], { at: number | null }>;
  accept: ReturnType<typeof prepareAccept>;
  recordRejection: ReturnType<typeof prepareRecordRejection>;
  ping: ReturnType<typeof preparePing>;
  listEvents: ReturnType<typeof prepareListEvents>;
  getEvent: ReturnType<typeof prepareGetEvent>;
}

function openConnection(path: string, busyTimeoutMs: number): Database.Database {
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new RangeError(`busyTimeoutMs must be an integer ≥ 0, got ${busyTimeoutMs}`);
  }
  const memory = path === ":memory:";
  let db: Database.Database | undefined;
  try {
    if (!memory) mkdirSync(dirname(path), { recursive: true });
    // `timeout` is SQLite's busy timeout; it is set before the first pragma so that even switching
    // to WAL waits for a concurrent opener instead of failing with SQLITE_BUSY.
    db = new Database(path, { timeout: busyTimeoutMs });
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
