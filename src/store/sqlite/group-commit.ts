import type Database from "better-sqlite3";
import { hookinboxError } from "../../errors.ts";
import { isDatabaseWideError, storeUnavailable } from "./errors.ts";

/**
 * Group commit for a synchronous SQLite connection.
 *
 * better-sqlite3 runs every statement synchronously on the event loop, and with
 * `synchronous = FULL` every COMMIT waits for an fsync of the WAL. One transaction per webhook
 * would therefore spend most of its time in fsync. Instead `submit()` queues a unit of work and,
 * if no flush is scheduled, schedules one with `setImmediate`; the flush runs every queued unit in
 * ONE `BEGIN IMMEDIATE … COMMIT` (at most `maxBatch` units; the rest get another flush) and
 * settles the promises only after COMMIT has returned, i.e. after the fsync. Requests whose bytes
 * arrive in the same event-loop turn, and every request that arrived while the previous fsync was
 * blocking the loop, share one fsync.
 *
 * Measured on the 2-core dev VM (virtio disk), test/store/fixtures/measure-group-commit.ts:
 * - over HTTP (node:http server in its own process, autocannon with 50 connections, 1.5 KB
 *   bodies, three 5 s runs on a shared, noisy machine): median batch 27–32 (p10 9–14, p90
 *   42–50, max 50 = one per connection), 112–272 commits/s carrying 3.4k–7.5k accepts/s at p50
 *   5–11 ms. The same server with maxBatch 1 (one transaction per accept) managed 0.5k–2.0k
 *   accepts/s at p50 24–91 ms: group commit gave 3.4–7× more accepts per second, back to back.
 * - in process, closed loop: the batch equals the number of concurrent callers (50 callers →
 *   median batch 50, 311 commits/s, 15.5k accepts/s vs 2.9k/s with maxBatch 1). One caller
 *   alone still gets one commit per accept (batch 1): when idle, group commit costs one
 *   setImmediate hop, not a timer wait.
 * This disk fsyncs in ~0.3 ms; the slower the fsync, the more requests queue behind it and the
 * larger (and more valuable) the batches.
 *
 * If a batch throws, its transaction is rolled back and its units are retried one by one, each
 * in its own transaction, so one bad unit cannot fail its neighbours; units that still fail
 * reject with HOOKINBOX_STORE_UNAVAILABLE (cause attached). Exception: when the error concerns the
 * whole database (busy after the busy timeout, disk full, read-only, I/O error, corruption…)
 * the units are rejected at once, because a one-by-one retry would hit the same wall once per
 * unit and, with a busy timeout, block the event loop once per unit.
 *
 * @example
 * ```ts
 * const commits = new GroupCommit(db);
 * const id = await commits.submit(() => insertEvent.get(row)); // resolves after COMMIT
 * ```
 */
export class GroupCommit {
  readonly #db: Database.Database;
  readonly #maxBatch: number;
  readonly #onCommit: ((info: CommitInfo) => void) | undefined;
  #queue: Unit<unknown>[] = [];
  #scheduled = false;
  #closed = false;
  #commits = 0;
  #largestBatch = 0;
  /** Set while an exclusive (async) transaction is open: flushes wait for it to end. */
  #exclusive = false;
  #exclusiveTail: Promise<unknown> = Promise.resolve();
  readonly #finishers: TransactionFinisher[] = [];

  constructor(
    db: Database.Database,
    options: { maxBatch?: number; onCommit?: (info: CommitInfo) => void } = {},
  ) {
    this.#db = db;
    const maxBatch = options.maxBatch ?? 512;
    if (!Number.isInteger(maxBatch) || maxBatch < 1) {
      throw new RangeError(`maxBatch must be an integer ≥ 1, got ${maxBatch}`);
    }
    this.#maxBatch = maxBatch;
    this.#onCommit = options.onCommit;
  }

  /** Successful COMMITs so far (batched or one-by-one). */
  get commits(): number {
    return this.#commits;
  }

  /** The largest number of units committed together so far. */
  get largestBatch(): number {
    return this.#largestBatch;
  }

  /**
   * Registers work that units leave to the end of their transaction (the audit log writes its
   * tree row once per transaction, not once per event): `beforeCommit` runs inside every
   * transaction, batched, alone or exclusive, just before its COMMIT; `reset` after it ends,
   * committed or rolled back, so nothing a rolled-back unit left is carried into the next one.
   */
  addFinisher(finisher: TransactionFinisher): void {
    this.#finishers.push(finisher);
  }

  /**
   * Queues `work` to run inside the next group transaction. Resolves with its return value once
   * the transaction has committed. `work` must be synchronous and must not commit or roll back;
   * it may run twice (batch, then alone) so it must not have effects outside the database.
   */
  submit<T>(work: () => T): Promise<T> {
    if (this.#closed) {
      return Promise.reject(hookinboxError("HOOKINBOX_STORE_CLOSED"));
    }
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve, reject } as Unit<unknown>);
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  /**
   * Runs `body` in a transaction of its own that may await (a handler's `ctx.transaction`). The
   * connection is shared, so while it is open no group flush runs (their units would otherwise
   * join it and be acknowledged before it commits); exclusive transactions run one at a time.
   * Keep `body` to SQL: everything queued behind it waits for it.
   */
  exclusive<T>(body: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(hookinboxError("HOOKINBOX_STORE_CLOSED"));
    const run = async (): Promise<T> => {
      if (this.#closed) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
      const db = this.#db;
      const started = performance.now();
      this.#exclusive = true;
      try {
        db.exec("BEGIN IMMEDIATE");
        try {
          const result = await body();
          this.#finish();
          db.exec("COMMIT");
          this.#committed(1, started);
          return result;
        } catch (error) {
          try {
            if (db.open && db.inTransaction) db.exec("ROLLBACK");
          } catch {
            // The original error is the one worth reporting.
          }
          throw error;
        }
      } finally {
        this.#resetFinishers();
        this.#exclusive = false;
        if (this.#queue.length > 0 && !this.#scheduled) {
          this.#scheduled = true;
          setImmediate(() => this.#flush());
        }
      }
    };
    const result = this.#exclusiveTail.then(run, run);
    this.#exclusiveTail = result.catch(() => undefined);
    return result;
  }

  /**
   * Refuses new work with HOOKINBOX_STORE_CLOSED, waits for an open exclusive transaction, then
   * commits everything already queued.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#exclusiveTail;
    while (this.#queue.length > 0) this.#flushOnce();
  }

  #flush(): void {
    this.#scheduled = false;
    if (this.#exclusive) return; // the exclusive transaction reschedules when it ends
    this.#flushOnce();
    if (this.#queue.length > 0 && !this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    }
  }

  #flushOnce(): void {
    const batch = this.#queue.splice(0, this.#maxBatch);
    if (batch.length === 0) return;
    const started = performance.now();
    let results: unknown[];
    try {
      results = this.#transaction(() => batch.map((unit) => unit.work()));
    } catch (error) {
      if (batch.length === 1 || isDatabaseWideError(error)) {
        const failure = storeUnavailable(error);
        for (const unit of batch) unit.reject(failure);
        return;
      }
      let wall: unknown;
      for (const unit of batch) {
        // Once the database itself fails (e.g. another process took the lock), stop retrying.
        if (wall === undefined) wall = this.#runAlone(unit);
        else unit.reject(storeUnavailable(wall));
      }
      return;
    }
    this.#committed(batch.length, started);
    batch.forEach((unit, index) => {
      unit.resolve(results[index]);
    });
  }

  /** Runs one unit in its own transaction; returns the error if it concerns the whole database. */
  #runAlone(unit: Unit<unknown>): unknown {
    const started = performance.now();
    let result: unknown;
    try {
      result = this.#transaction(unit.work);
    } catch (error) {
      unit.reject(storeUnavailable(error));
      return isDatabaseWideError(error) ? error : undefined;
    }
    this.#committed(1, started);
    unit.resolve(result);
    return undefined;
  }

  #transaction<T>(work: () => T): T {
    const db = this.#db;
    db.exec("BEGIN IMMEDIATE");
    try {
      const result = work();
      this.#finish();
      db.exec("COMMIT");
      return result;
    } catch (error) {
      try {
        // A failed COMMIT (or an I/O error) may already have rolled the transaction back.
        if (db.open && db.inTransaction) db.exec("ROLLBACK");
      } catch {
        // The original error is the one worth reporting.
      }
      throw error;
    } finally {
      this.#resetFinishers();
    }
  }

  #finish(): void {
    for (const finisher of this.#finishers) finisher.beforeCommit();
  }

  #resetFinishers(): void {
    for (const finisher of this.#finishers) finisher.reset();
  }

  #committed(items: number, started: number): void {
    this.#commits += 1;
    if (items > this.#largestBatch) this.#largestBatch = items;
    try {
      this.#onCommit?.({ items, durationMs: performance.now() - started });
    } catch {
      // A metrics hook must never keep committed work from being acknowledged.
    }
  }
}

/**
 * What one COMMIT carried, for metrics.
 *
 * @example
 * ```ts
 * openSqliteStore({ path, onCommit: (info: CommitInfo) => histogram.observe(info.items) });
 * ```
 */
export interface CommitInfo {
  /** Units of work (accepts, rejections, pings) in the transaction. */
  readonly items: number;
  /** Time from BEGIN to the return of COMMIT (fsync included), in ms. */
  readonly durationMs: number;
}

/**
 * Work a transaction's units leave to its end (see {@link GroupCommit.addFinisher}).
 *
 * @example
 * ```ts
 * group.addFinisher({ beforeCommit: () => writeTreeRow(), reset: () => forgetTree() });
 * ```
 */
export interface TransactionFinisher {
  /** Runs inside the transaction just before COMMIT; throwing rolls the transaction back. */
  beforeCommit(): void;
  /** Runs once the transaction has ended, committed or not. */
  reset(): void;
}

interface Unit<T> {
  work(): T;
  resolve(value: T): void;
  reject(error: unknown): void;
}
