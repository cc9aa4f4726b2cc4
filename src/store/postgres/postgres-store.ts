import type { Logger } from "../../log.ts";
import type { AcceptDriver } from "../core/accept-driver.ts";
import { storeAccepts } from "../core/accepts.ts";
import { auditWrites } from "../core/audit-writes.ts";
import { storeReads } from "../core/core-reads.ts";
import { storeWrites } from "../core/core-writes.ts";
import { storeLifecycle } from "../core/lifecycle.ts";
import { partitionUpkeep } from "../core/partition-upkeep.ts";
import { programWrites } from "../core/program-writes.ts";
import { purgeWrites } from "../core/purge-writes.ts";
import { storeClaims } from "../core/queue-claim.ts";
import { storeSettles } from "../core/queue-settle.ts";
import type { CoreTable } from "../core/read-driver.ts";
import { storeReplays } from "../core/replay.ts";
import { retentionWrites } from "../core/retention-step.ts";
import type { SqlStatement } from "../core/sql-template.ts";
import type { Store } from "../types.ts";
import { createPool, parsePostgresUrl, withRetry } from "./connection.ts";
import { insertRowsPostgres, prepareInsertOrGetEvent } from "./insert-or-get-event.ts";
import { listenForDeliveries } from "./listen.ts";
import { migratePostgres } from "./migrate.ts";
import { ensurePartitionsPostgres } from "./partitions.ts";
import { pingPostgres } from "./ping.ts";
import { runClaimPlan } from "./queue/claim-plan.ts";
import { runEndPlans, runEndPlanWith } from "./queue/end-plan.ts";
import { runRetentionProgram } from "./retention-step.ts";
import { runWriteProgram } from "./run-program.ts";
import { runStatementsPostgres } from "./run-statements.ts";
import { runTransactionPostgres } from "./run-transaction.ts";
import { schemaNames } from "./schema-names.ts";
import { explainStartupError, isSchemaMissing } from "./startup-errors.ts";

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
  const life = storeLifecycle();
  const now = options.now ?? Date.now;
  const listeners = new Set<() => void>();
  let stopListening: (() => Promise<void>) | null = null;

  const notify = async () => {
    await withRetry(() => pool.query("SELECT pg_notify($1, '')", [channel]));
  };
  // The Store's reads are core's (core/core-reads.ts), run on the pool; the store guards them.
  const core = storeReads({
    dialect: "postgres",
    table: (name) => t[name],
    rows: async (statement) =>
      (await withRetry(() => pool.query(statement.text, statement.params))).rows,
  });
  // Accepts, rejections, replays and the search by dedup key are core's (core/accepts.ts,
  // core/replay.ts); accept plans run gathered, one statement per batch (insert-or-get-event.ts).
  const acceptDriver: AcceptDriver = {
    dialect: "postgres",
    table: (name) => t[name],
    rows: async (statement) =>
      (await withRetry(() => pool.query(statement.text, statement.params))).rows,
    execute: (statements) => runStatementsPostgres(pool, statements),
    insertOrGetEvent: prepareInsertOrGetEvent(pool, t, channel, options.audit ?? true),
    insertRows: (ids, statements) => insertRowsPostgres(pool, t, ids, statements),
  };
  const accepts = storeAccepts(acceptDriver, options.audit ?? true);
  const replays = storeReplays({ ...acceptDriver, notifyDeliveries: notify }, core.deliveryById);
  /** Refuses work once closed, and tracks it so close() waits for it. */
  const run = <T>(work: () => Promise<T>): Promise<T> => life.run(work);
  const endPlans = runEndPlans(pool, t);

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
      if (life.closed || !isSchemaMissing(error)) throw error;
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

  // Core's audit and purge run on both primitives, on the pool.
  const driver = {
    dialect: "postgres",
    table: (name: CoreTable) => t[name],
    rows: async <Row>(statement: SqlStatement) =>
      (await withRetry(() => pool.query(statement.text, statement.params))).rows as Row[],
    execute: (statements: readonly SqlStatement[]) => runStatementsPostgres(pool, statements),
  } as const;

  const retention = retentionWrites({
    ...driver,
    runRetentionProgram: (program) => runRetentionProgram(pool, t, program),
  });

  return {
    kind: "postgres",
    schema: url.schema,
    migrate: () =>
      run(() =>
        migrateNow().catch((error: unknown) => {
          throw explainStartupError(error, url.directUrl ?? url.connectionString);
        }),
      ),
    accept: (input) => run(() => healSchema(() => accepts.accept(input))),
    recordRejection: (input) => run(() => accepts.recordRejection(input)),
    retentionStep: (input) =>
      run(() => retention.retentionStep({ ...input, audit: options.audit ?? true })),
    ...life.guard(
      partitionUpkeep({
        partitioned: true,
        ensurePartitions: (fromMs, toMs) =>
          withRetry(() => ensurePartitionsPostgres(pool, t, fromMs, toMs)),
      }),
      [],
    ),
    ping: () => run(() => healSchema(() => pingPostgres(pool, t, now))),
    async close() {
      listeners.clear();
      await life.close(async () => {
        await stopListening?.();
        await pool.end();
      });
    },
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

    ...life.guard(
      storeSettles({
        dialect: "postgres",
        table: (name) => t[name],
        execute: (statements) => runStatementsPostgres(pool, statements),
        runEndPlans: endPlans,
        runEndPlanWith: (plan, work) => runEndPlanWith(pool, t, plan, work),
        wake: notify,
        deliveryById: core.deliveryById,
      }),
      [],
    ),
    replayEvent: (input) => run(() => replays.replayEvent(input)),
    replayWhere: (filter, replayOptions) => run(() => replays.replayWhere(filter, replayOptions)),
    eventIdsByDedupKey: (sources, key) => run(() => accepts.eventIdsByDedupKey(sources, key)),

    // Accepts queue their leaves; the sequencer numbers them in transactions of its own.
    ...life.guard(
      auditWrites({
        ...driver,
        appends: "queued",
        transaction: (work) => runTransactionPostgres(pool, t, work),
      }),
      [],
    ),
    ...life.guard(purgeWrites(driver), []),
    ...life.guard(core, []),
    // Claims and lease hand-backs are core's (core/queue-claim.ts); a claim heals the schema.
    ...life.guard(
      storeClaims({
        dialect: "postgres",
        table: (name) => t[name],
        execute: (statements) => runStatementsPostgres(pool, statements),
        runClaimPlan: (plan) => healSchema(() => runClaimPlan(pool, plan)),
      }),
      [],
    ),
    ...life.guard(
      storeWrites({
        dialect: "postgres",
        table: (name) => t[name],
        execute: (statements) => runStatementsPostgres(pool, statements),
      }),
      [],
    ),
    // Effects, alert records, destination states and circuit closes: core's write programs.
    ...life.guard(
      programWrites({
        dialect: "postgres",
        table: (name) => t[name],
        execute: (statements) => runStatementsPostgres(pool, statements),
        runProgram: (name, input) => runWriteProgram(pool, t, name, input),
        notifyDeliveries: notify,
      }),
      [],
    ),
  };
}
