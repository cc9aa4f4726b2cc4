import { ulid } from "../../ids.ts";
import type { ClaimInput } from "../queue-types.ts";
import { aheadOnKeySql } from "./queue-rules.ts";
import type { CoreTable } from "./read-driver.ts";
import type { SqlStatement } from "./sql-template.ts";
import type { WriteDriver } from "./write-driver.ts";

/**
 * A claim as SQLite's writer runs it, inside one write transaction (its one writer claims
 * alone): page through `sql.page` (named parameters `params` plus `@afterRunAt`, `@afterId` and
 * `@page`, the row after which the page starts and its size: twice what is still to lease, within
 * `scan`, never past `scan.max` candidates in all) until `limit` are leased; a candidate whose
 * `behind` column is 1 is parked by `sql.block`, any other is leased by `sql.lease`, which returns
 * it (or nothing when it was taken meanwhile); a lease opens the attempt `attemptIds[n]` (the
 * n-th lease) by `sql.attempt`, and `sql.event` reads its event and its key's applied version.
 * Each statement binds `params` and the columns of the row at hand (`attempt_id` too) by name.
 * Plain data: it crosses to the writer thread.
 *
 * @example
 * ```ts
 * const plan: SqliteClaimPlan = claimPlanner((name) => name).sqlite({ workerId, limit: 10, leaseMs: 30_000, now });
 * ```
 */
export interface SqliteClaimPlan {
  readonly dialect: "sqlite";
  readonly limit: number;
  readonly attemptIds: readonly string[];
  readonly scan: { readonly max: number; readonly minPage: number; readonly maxPage: number };
  readonly sql: {
    readonly page: string;
    readonly block: string;
    readonly lease: string;
    readonly attempt: string;
    readonly event: string;
  };
  readonly params: Readonly<Record<string, string | number>>;
}

/**
 * A claim as PostgreSQL runs it, one transaction of two statements (key-locks.ts rule 3): on a
 * connection that keeps prepared statements, `prepare` once per connection, then `oneTrip` as
 * one simple-query message whose statement `rowsAt` answers the claimed rows; otherwise (behind
 * a transaction-mode pooler, or `oneTrip` null) BEGIN, `lock` (the ids it locked), then unless
 * it locked none `lease` with those ids as its first parameter, then COMMIT. The whole
 * transaction is retried on a transient failure.
 *
 * @example
 * ```ts
 * const plan: PostgresClaimPlan = claimPlanner((name) => t[name]).postgres({ workerId, limit: 10, leaseMs: 30_000, now });
 * ```
 */
export interface PostgresClaimPlan {
  readonly dialect: "postgres";
  readonly prepare: readonly string[];
  readonly oneTrip: {
    readonly statements: readonly SqlStatement[];
    readonly rowsAt: number;
  } | null;
  readonly lock: SqlStatement;
  readonly lease: SqlStatement;
}

/**
 * A claimed delivery as either store's claim returns it (core/queue-claim.ts reads it).
 *
 * @example
 * ```ts
 * const rows: ClaimRow[] = await driver.runClaimPlan(plan); // [{ id: "dlv_…", attempt_id: "att_…", … }]
 * ```
 */
export type ClaimRow = Record<string, unknown>;

/**
 * What a driver gives core to claim deliveries: its `execute` primitive and `runClaimPlan`,
 * which runs a claim core planned as one transaction of its own (see the two plans).
 *
 * @example
 * ```ts
 * const driver: ClaimDriver = { dialect: "sqlite", table: (name) => name, execute, runClaimPlan };
 * ```
 */
export type ClaimDriver = WriteDriver &
  (
    | { readonly dialect: "sqlite"; runClaimPlan(plan: SqliteClaimPlan): Promise<ClaimRow[]> }
    | { readonly dialect: "postgres"; runClaimPlan(plan: PostgresClaimPlan): Promise<ClaimRow[]> }
  );

/**
 * The advisory lock id of a (target, ordering key), as SQL over two text expressions (the key
 * lock protocol: postgres/queue/key-locks.ts).
 *
 * @example
 * ```ts
 * const sql = `SELECT pg_advisory_xact_lock(${keyLockId("d.target", "d.ordering_key")})`;
 * ```
 */
export function keyLockId(target: string, orderingKey: string): string {
  return `hashtextextended(${target} || chr(31) || ${orderingKey}, 7031)`;
}

/** The columns a lease answers, for the claimed row. */
const leasedColumns = `id, event_id, target, attempts AS attempt, budget_base, lease_expires_at,
  is_replay, replay_of, ordering_key, version, run_at`;

/** SQLite's claim statements (SqliteClaimPlan); `of`: for some events only. */
function sqliteClaimSql(of: boolean): SqliteClaimPlan["sql"] {
  // Due pending deliveries in due order, a page at a time, each with whether something is ahead
  // of it on its key (served by deliveries_key_queue; it cannot change while the claim runs: a
  // lease or a park keeps a delivery in its key's queue). INDEXED BY pins the partial due index
  // (without statistics the planner preferred (status, id) plus a sort of every pending row);
  // for some events (`@eventIds`, a JSON array) the event index, so that due deliveries of other
  // events ahead of them are never scanned.
  const ahead = aheadOnKeySql("sqlite", "o", {
    target: "d.target",
    orderingKey: "d.ordering_key",
    id: "d.id",
    orderVersion: "d.order_version",
  });
  const page = `
    SELECT d.id, d.run_at, d.ordering_key IS NOT NULL AND EXISTS (
             SELECT 1 FROM deliveries o WHERE ${ahead}) AS behind
    FROM deliveries d INDEXED BY ${of ? "deliveries_event" : "deliveries_due"}
    WHERE ${of ? "d.event_id IN (SELECT value FROM json_each(@eventIds)) AND " : ""}d.status = 'pending'
      AND d.run_at <= @now AND (d.run_at, d.id) > (@afterRunAt, @afterId)
    ORDER BY d.run_at, d.id LIMIT @page`;
  return {
    page,
    block: "UPDATE deliveries SET status = 'blocked', updated_at = @now WHERE id = @id",
    lease: `
      UPDATE deliveries
      SET status = 'running', attempts = attempts + 1, lease_owner = @workerId, updated_at = @now,
          lease_expires_at = @now + coalesce(
            (SELECT l.value FROM json_each(@leases) l WHERE l.key = deliveries.target), @leaseMs)
      WHERE id = @id AND status = 'pending'
      RETURNING ${leasedColumns}`,
    attempt: `
      INSERT INTO attempts (id, delivery_id, attempt, worker_id, started_at, outcome)
      VALUES (@attempt_id, @id, @attempt, @workerId, @now, 'running')`,
    event: `
      SELECT e.source, e.dedup_key, e.type, e.occurred_at, e.body, e.headers, e.traceparent,
             (SELECT a.version FROM applied_versions a
              WHERE a.target = @target AND a.ordering_key = @ordering_key) AS applied_version
      FROM events e WHERE e.id = @event_id`,
  };
}

/** The transaction-local setting through which the one-trip claim hands the locked ids on. */
const claimIds = "hookinbox.claim_ids";

/** PostgreSQL's claim statements (PostgresClaimPlan), over the store's tables. */
function postgresClaimSql(table: (name: CoreTable) => string) {
  const deliveries = table("deliveries");
  // Step 1 (key-locks.ts): lock a window of due pending rows (SKIP LOCKED) and try each one's
  // key lock. Rows whose key another transaction holds are left alone.
  const lock = (ofEvents: boolean) => `
    SELECT c.id, c.ordering_key IS NULL
             OR pg_try_advisory_xact_lock(${keyLockId("c.target", "c.ordering_key")}) AS locked
    FROM (SELECT d.id, d.target, d.ordering_key, d.run_at FROM ${deliveries} d
          WHERE d.status = 'pending' AND d.run_at <= $1${ofEvents ? " AND d.event_id = ANY($3::text[])" : ""}
          ORDER BY d.run_at, d.id LIMIT $2
          FOR UPDATE SKIP LOCKED) c
    ORDER BY c.run_at, c.id`;
  // Step 2, a statement later (it sees every commit made before the key locks were granted): of
  // the locked candidates ($1), lease up to $3 that have nothing ahead on their key (the lease per
  // target from $6/$7, else $4), park the others as `blocked`, open an attempt per lease ($8),
  // and return each lease with its event and the key's applied version. The candidates are read
  // by their ids behind OFFSET 0, where only the primary key can serve them: with `status =
  // 'pending'` beside the ids, PostgreSQL could read the whole pending index (deliveries_due).
  const lease = `
    WITH cand AS (
      SELECT d.id, d.target, d.ordering_key, d.order_version,
             row_number() OVER (ORDER BY d.run_at, d.id) AS pos
      FROM (SELECT * FROM ${deliveries} WHERE id = ANY($1::text[]) OFFSET 0) d
      WHERE d.status = 'pending'
    ), judged AS (
      SELECT c.id, c.pos, c.ordering_key IS NOT NULL AND EXISTS (
               SELECT 1 FROM ${deliveries} o
               WHERE ${aheadOnKeySql("postgres", "o", { target: "c.target", orderingKey: "c.ordering_key", id: "c.id", orderVersion: "c.order_version" })}) AS behind
      FROM cand c
    ), chosen AS (
      SELECT j.id, row_number() OVER (ORDER BY j.pos) AS n
      FROM judged j WHERE NOT j.behind ORDER BY j.pos LIMIT $3
    ), parked AS (
      UPDATE ${deliveries} d SET status = 'blocked', updated_at = $5
      FROM judged j WHERE d.id = j.id AND j.behind
    ), leased AS (
      UPDATE ${deliveries} d
      SET status = 'running', attempts = d.attempts + 1, lease_owner = $2, updated_at = $5,
          lease_expires_at = $5 + coalesce(
            (SELECT l.ms FROM unnest($6::text[], $7::bigint[]) AS l(target, ms) WHERE l.target = d.target), $4)
      FROM chosen c WHERE d.id = c.id
      RETURNING d.id, d.event_id, d.target, d.attempts, d.budget_base, d.is_replay, d.replay_of,
                d.ordering_key, d.version, d.lease_expires_at, d.run_at, c.n
    ), opened AS (
      INSERT INTO ${table("attempts")} (id, delivery_id, attempt, worker_id, started_at, outcome)
      SELECT ($8::text[])[l.n], l.id, l.attempts, $2, $5, 'running' FROM leased l
    )
    SELECT l.id, l.event_id, l.target, l.attempts AS attempt, l.budget_base, ($8::text[])[l.n] AS attempt_id,
           l.lease_expires_at, l.is_replay, l.replay_of, l.ordering_key, l.version, l.run_at,
           a.version AS applied_version,
           e.source, e.dedup_key, e.type, e.occurred_at, e.body, e.headers, e.traceparent
    FROM leased l JOIN ${table("events")} e ON e.id = l.event_id
    LEFT JOIN ${table("applied_versions")} a ON a.target = l.target AND a.ordering_key = l.ordering_key
    ORDER BY l.n`;
  // The long way hands the lease step only the ids whose key lock it took.
  const locked = (ofEvents: boolean) => `SELECT l.id FROM (${lock(ofEvents)}) l WHERE l.locked`;
  return {
    lockAll: locked(false),
    lockOf: locked(true),
    lease,
    // Prepared once per direct connection for the one-trip claim, `$1`… typed: the lock step
    // records the ids it locked in `claimIds`, the lease step reads them.
    prepare: [
      `PREPARE hookinbox_claim_lock_sq(bigint, int) AS
       SELECT set_config('${claimIds}', coalesce(array_agg(l.id) FILTER (WHERE l.locked), '{}')::text, true)
       FROM (${lock(false)}) l`,
      `PREPARE hookinbox_claim_lease_sq(text[], text, int, bigint, bigint, text[], bigint[], text[]) AS
       ${lease.replace("$1::text[]", `current_setting('${claimIds}')::text[]`)}`,
    ],
  };
}

/**
 * Plans claims for a store: `plan(input)` is the claim of `input` as its driver runs it
 * (`SqliteClaimPlan` or `PostgresClaimPlan`): the statements, the window of candidates, each
 * target's lease and the attempt ids, all decided here.
 *
 * @example
 * ```ts
 * const plan = claimPlanner((name) => name);
 * const rows = await driver.runClaimPlan(plan.sqlite({ workerId, limit: 10, leaseMs: 30_000, now }));
 * ```
 */
export function claimPlanner(table: (name: CoreTable) => string) {
  let sqliteSql: { all: SqliteClaimPlan["sql"]; of: SqliteClaimPlan["sql"] } | undefined;
  let postgresSql: ReturnType<typeof postgresClaimSql> | undefined;
  const attemptIds = (n: number, at: number) => Array.from({ length: n }, () => `att_${ulid(at)}`);
  const leases = (input: ClaimInput) =>
    Object.entries(input.targetLeaseMs ?? {}).map(([target, ms]) => [target, Math.floor(ms)]);
  return {
    sqlite(input: ClaimInput): SqliteClaimPlan {
      sqliteSql ??= { all: sqliteClaimSql(false), of: sqliteClaimSql(true) };
      const now = Math.floor(input.now);
      return {
        dialect: "sqlite",
        limit: input.limit,
        attemptIds: attemptIds(input.limit, now),
        // Blocked candidates are parked, so a claim scans at most 1000 and is not slowed by them
        // again; pages of twice what is still to lease, 8 to 100.
        scan: { max: 1000, minPage: 8, maxPage: 100 },
        sql: input.eventIds === undefined ? sqliteSql.all : sqliteSql.of,
        params: {
          now,
          workerId: input.workerId,
          leaseMs: Math.floor(input.leaseMs),
          leases: JSON.stringify(Object.fromEntries(leases(input))),
          ...(input.eventIds === undefined ? {} : { eventIds: JSON.stringify(input.eventIds) }),
        },
      };
    },
    postgres(input: ClaimInput): PostgresClaimPlan {
      postgresSql ??= postgresClaimSql(table);
      const now = Math.floor(input.now);
      const targetLeases = leases(input);
      // Candidates locked to lease `limit`: room for heads behind other heads (parked), but no
      // more than 250 beyond a large claim's own (each is a row lock, and a try of its key's lock).
      const window = Math.max(100, Math.min(input.limit * 4, input.limit + 250));
      // $2… of the lease step.
      const lease = [
        input.workerId,
        input.limit,
        Math.floor(input.leaseMs),
        now,
        targetLeases.map(([target]) => target),
        targetLeases.map(([, ms]) => ms),
        attemptIds(input.limit, now),
      ];
      return {
        dialect: "postgres",
        prepare: postgresSql.prepare,
        // A claim for some events only (`eventIds`, rare: one serverless call) takes the long way.
        oneTrip: input.eventIds
          ? null
          : {
              statements: [
                { text: "BEGIN", params: [] },
                { text: "EXECUTE hookinbox_claim_lock_sq($1, $2)", params: [now, window] },
                // The lease step reads every row by a key. Its plan is made once per connection
                // (a generic plan, after five custom ones), possibly while the table is nearly
                // empty, and kept until statistics change (never where autovacuum is off): made
                // then with sequential scans, a soak's claims read a 50,000-row backlog each, up
                // to 1.4 s. Planned with sequential scans ruled out, it keeps to the keys at any
                // size. (Planning it for every claim instead made a claim ~3 ms slower; the lock
                // step keeps its plan, the pending index read in order to the LIMIT.)
                { text: "SET LOCAL enable_seqscan = off", params: [] },
                {
                  text: "EXECUTE hookinbox_claim_lease_sq(NULL, $1, $2, $3, $4, $5, $6, $7)",
                  params: lease,
                },
                { text: "COMMIT", params: [] },
              ],
              rowsAt: 3,
            },
        lock: input.eventIds
          ? { text: postgresSql.lockOf, params: [now, window, [...input.eventIds]] }
          : { text: postgresSql.lockAll, params: [now, window] },
        lease: { text: postgresSql.lease, params: lease },
      };
    },
  };
}
