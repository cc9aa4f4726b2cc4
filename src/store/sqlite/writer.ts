import type Database from "better-sqlite3";
import type { EndPlan } from "../core/end-plan.ts";
import type { TransactionClient } from "../queue-types.ts";
import type { MigrationReport } from "../types.ts";
import { prepareFailed } from "./errors.ts";
import type { GroupCommit } from "./group-commit.ts";
import { migrateSqlite } from "./migrate.ts";
import { createTransactionClient } from "./transaction-client.ts";
import { prepareWriteOps, type WriteOp, type WriteOps } from "./write-ops.ts";

/** Where the SQLite store's writes run: on the caller's thread, or on a writer thread. */
export interface SqliteWriter {
  migrate(): Promise<MigrationReport>;
  /** Runs a named write operation inside the next group commit. */
  run<K extends WriteOp>(op: K, ...args: Parameters<WriteOps[K]>): Promise<ReturnType<WriteOps[K]>>;
  /** Runs an end plan in a transaction of its own together with the handler's SQL. */
  exclusive<T>(input: EndPlan, work: (tx: TransactionClient) => Promise<T>): Promise<T>;
  /** Reads a pragma on the writing connection. */
  pragma(name: string): Promise<unknown>;
  counters(): { commits: number; largestBatch: number };
  close(): Promise<void>;
}

/**
 * The writer that runs on the caller's thread: the group commit and the write operations share
 * the store's one connection (the default for libraries and tests).
 *
 * @example
 * ```ts
 * const writer = inlineWriter(db, group, Date.now);
 * await writer.run("insertOrGetEvent", acceptPlanOf(input, true));
 * ```
 */
export function inlineWriter(
  db: Database.Database,
  group: GroupCommit,
  now: () => number,
): SqliteWriter {
  let ops: WriteOps | undefined;
  const prepared = () => {
    try {
      ops ??= prepareWriteOps(db, group);
    } catch (error) {
      throw prepareFailed(error);
    }
    return ops;
  };
  return {
    async migrate() {
      return migrateSqlite(db, { now });
    },
    run(op, ...args) {
      let current: WriteOps;
      try {
        current = prepared();
      } catch (error) {
        return Promise.reject(error);
      }
      return group.submit(() => (current[op] as (...a: unknown[]) => never)(...args));
    },
    async exclusive(input, work) {
      const current = prepared();
      // The lease is checked first so a worker that lost it runs none of its SQL.
      return group.exclusive(async () => {
        current.endHeld(input);
        return work(createTransactionClient(db));
      });
    },
    async pragma(name) {
      return db.pragma(name, { simple: true });
    },
    counters: () => ({ commits: group.commits, largestBatch: group.largestBatch }),
    async close() {
      await group.close();
    },
  };
}
