import type { Logger } from "../../log.ts";
import { coreStore, type StoreDriver } from "../core/core-store.ts";
import type { Store } from "../types.ts";
import { createPool, parsePostgresUrl, withRetry } from "./connection.ts";
import { explainStartupError, isSchemaMissing } from "./errors.ts";
import { insertRowsPostgres, prepareInsertOrGetEvent } from "./insert-or-get-event.ts";
import { listenForDeliveries } from "./listen.ts";
import { migratePostgres } from "./migrate.ts";
import { ensurePartitionsPostgres } from "./partitions.ts";
import { runClaimPlan } from "./queue/claim-plan.ts";
import { runEndPlans, runEndPlanWith } from "./queue/end-plan.ts";
import { runRetentionProgram } from "./retention-step.ts";
import { runWriteProgram } from "./run-program.ts";
import { runStatementsPostgres } from "./run-statements.ts";
import { runTransactionPostgres } from "./run-transaction.ts";
import { schemaNames } from "./schema-names.ts";

/** A PostgreSQL store: the Store contract plus the pool's own lifecycle. */
export interface PostgresStore extends Store {
  readonly kind: "postgres";
  /** The schema holding hookinbox's tables. */
  readonly schema: string;
}

/**
 * Opens a PostgreSQL store (`postgres://…?schema=hookinbox&pool=10`). Any number of gateway and
 * worker processes may share one database: the unique constraint deduplicates across all of them,
 * claims use FOR UPDATE SKIP LOCKED with per-key advisory locks, and LISTEN/NOTIFY wakes workers on
 * every node. Transient errors (serialization failures, deadlocks, restarts, dropped connections)
 * are retried briefly, then surface as HOOKINBOX_STORE_UNAVAILABLE (ingest answers 503). Its SQL
 * names its schema and its connections keep the database's `search_path` (see schema-names.ts).
 *
 * @example
 * ```ts
 * const store = openPostgresStore("postgres://postgres@127.0.0.1:5432/app?schema=hookinbox");
 * await store.migrate();
 * ```
 */
export function openPostgresStore(
  urlText: string,
  options: { logger?: Logger; audit?: boolean; now?: () => number } = {},
): PostgresStore {
  const url = parsePostgresUrl(urlText);
  const warn = (error: Error) =>
    options.logger?.warn({ err: error.message }, "postgres connection error");
  const pool = createPool(url, warn);
  const t = schemaNames(url.schema);
  const channel = `hookinbox_deliveries_${url.schema}`;
  const audit = options.audit ?? true;
  const listeners = new Set<() => void>();
  let stopListening: (() => Promise<void>) | null = null;
  let released = false;

  /** Migrates over the direct URL when there is one (DDL never sits behind a pooler's limits). */
  const migrateNow = async () => {
    if (!url.directUrl) return withRetry(() => migratePostgres(pool, url.schema));
    const direct = createPool(url, warn, url.directUrl, 1);
    try {
      return await withRetry(() => migratePostgres(direct, url.schema));
    } finally {
      await direct.end();
    }
  };
  // The schema can vanish under a running store (schema dropped, database dropped and created
  // empty). Work that finds it missing re-applies the migrations once (one at a time across
  // callers) and runs again, so ingest heals without a restart; until then it fails as before
  // (503, /readyz false).
  let remigrating: Promise<unknown> | null = null;
  const healSchema = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (released || !isSchemaMissing(error)) throw error;
      remigrating ??= migrateNow()
        .then((report) => {
          options.logger?.warn(
            { code: "HOOKINBOX_STORE_UNAVAILABLE", applied: report.applied.length },
            `PostgreSQL schema ${url.schema} was missing; migrations re-applied`,
          );
        })
        .finally(() => {
          remigrating = null;
        });
      await remigrating;
      return work();
    }
  };

  // The primitives core's Store runs on (core/core-store.ts), on the pool; transient failures
  // are retried whole (connection.ts).
  const driver: StoreDriver = {
    dialect: "postgres",
    table: (name) => t[name],
    audit,
    now: options.now ?? Date.now,
    rows: async (statement) =>
      (await withRetry(() => pool.query(statement.text, statement.params))).rows,
    execute: (statements) => runStatementsPostgres(pool, statements),
    insertOrGetEvent: prepareInsertOrGetEvent(pool, t, channel, audit),
    insertRows: (ids, statements) => insertRowsPostgres(pool, t, ids, statements),
    runClaimPlan: (plan) => runClaimPlan(pool, plan),
    runEndPlans: runEndPlans(pool, t),
    runEndPlanWith: (plan, work) => runEndPlanWith(pool, t, plan, work),
    runProgram: (name, input) => runWriteProgram(pool, t, name, input),
    runRetentionProgram: (program) => runRetentionProgram(pool, t, program),
    notifyDeliveries: async () => {
      await withRetry(() => pool.query("SELECT pg_notify($1, '')", [channel]));
    },
    // Accepts queue their leaves; the sequencer numbers them in transactions of its own.
    appends: "queued",
    transaction: (work) => runTransactionPostgres(pool, t, work),
    partitioned: true,
    ensurePartitions: (fromMs, toMs) =>
      withRetry(() => ensurePartitionsPostgres(pool, t, fromMs, toMs)),
    healSchema,
    migrate: () =>
      migrateNow().catch((error: unknown) => {
        throw explainStartupError(error, url.directUrl ?? url.connectionString);
      }),
    onDeliveries(listener) {
      listeners.add(listener);
      // Behind a pooler without a listenUrl/directUrl there is no LISTEN: workers in other
      // processes find new work at their next poll (worker.pollInterval, default 1 s).
      if (url.listenUrl === null) return () => listeners.delete(listener);
      stopListening ??= listenForDeliveries(
        { ...url, listenUrl: url.listenUrl },
        channel,
        () => {
          for (const l of listeners) l();
        },
        warn,
      );
      return () => listeners.delete(listener);
    },
    async release() {
      released = true;
      listeners.clear();
      await stopListening?.();
      await pool.end();
    },
  };
  const { acceptCounters: _counters, ...store } = coreStore(driver);
  return { ...store, kind: "postgres", schema: url.schema };
}
