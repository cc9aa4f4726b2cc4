import type pg from "pg";
import { ulid } from "../../../ids.ts";
import { aheadOnKeySql } from "../../core/queue-rules.ts";
import type { ClaimedDelivery, ClaimInput } from "../../queue-types.ts";
import { keepsPrepared, withClient, withRetry } from "../connection.ts";
import type { SchemaNames } from "../schema-names.ts";
import { inlineSql, queryStatements } from "../simple-query.ts";
import { keyLockId } from "./key-locks.ts";

/**
 * Step 1 (see key-locks.ts): lock a window of due pending rows (SKIP LOCKED) and try each one's
 * key lock. Rows whose key another transaction holds are left alone.
 */
const lockSql = (t: SchemaNames, ofEvents = false) => `
  SELECT c.id, c.ordering_key IS NULL
           OR pg_try_advisory_xact_lock(${keyLockId("c.target", "c.ordering_key")}) AS locked
  FROM (SELECT d.id, d.target, d.ordering_key, d.run_at FROM ${t.deliveries} d
        WHERE d.status = 'pending' AND d.run_at <= $1${ofEvents ? " AND d.event_id = ANY($3::text[])" : ""}
        ORDER BY d.run_at, d.id LIMIT $2
        FOR UPDATE SKIP LOCKED) c
  ORDER BY c.run_at, c.id`;

/**
 * Step 2, a statement later (it sees every commit made before the key locks were granted): of
 * the locked candidates, lease up to $3 that have nothing ahead on their key (the lease per
 * target from $6/$7, else $4), park the others as `blocked`, open an attempt per lease, and
 * return each lease with its event and the key's applied version. The candidates are read by
 * their ids behind OFFSET 0, where only the primary key can serve them: with `status = 'pending'`
 * beside the ids, PostgreSQL could read the whole pending index (deliveries_due) instead.
 */
const leaseSql = (t: SchemaNames) => `
  WITH cand AS (
    SELECT d.id, d.target, d.ordering_key, d.order_version,
           row_number() OVER (ORDER BY d.run_at, d.id) AS pos
    FROM (SELECT * FROM ${t.deliveries} WHERE id = ANY($1::text[]) OFFSET 0) d
    WHERE d.status = 'pending'
  ), judged AS (
    SELECT c.id, c.pos, c.ordering_key IS NOT NULL AND EXISTS (
             SELECT 1 FROM ${t.deliveries} o
             WHERE ${aheadOnKeySql("postgres", "o", { target: "c.target", orderingKey: "c.ordering_key", id: "c.id", orderVersion: "c.order_version" })}) AS behind
    FROM cand c
  ), chosen AS (
    SELECT j.id, row_number() OVER (ORDER BY j.pos) AS n
    FROM judged j WHERE NOT j.behind ORDER BY j.pos LIMIT $3
  ), parked AS (
    UPDATE ${t.deliveries} d SET status = 'blocked', updated_at = $5
    FROM judged j WHERE d.id = j.id AND j.behind
  ), leased AS (
    UPDATE ${t.deliveries} d
    SET status = 'running', attempts = d.attempts + 1, lease_owner = $2, updated_at = $5,
        lease_expires_at = $5 + coalesce(
          (SELECT l.ms FROM unnest($6::text[], $7::bigint[]) AS l(target, ms) WHERE l.target = d.target), $4)
    FROM chosen c WHERE d.id = c.id
    RETURNING d.id, d.event_id, d.target, d.attempts, d.budget_base, d.is_replay, d.replay_of,
              d.ordering_key, d.version, d.lease_expires_at, d.run_at, c.n
  ), opened AS (
    INSERT INTO ${t.attempts} (id, delivery_id, attempt, worker_id, started_at, outcome)
    SELECT ($8::text[])[l.n], l.id, l.attempts, $2, $5, 'running' FROM leased l
  )
  SELECT l.id, l.event_id, l.target, l.attempts AS attempt, l.budget_base, ($8::text[])[l.n] AS attempt_id,
         l.lease_expires_at, l.is_replay, l.replay_of, l.ordering_key, l.version, l.run_at,
         a.version AS applied_version,
         e.source, e.dedup_key, e.type, e.occurred_at, e.body, e.headers, e.traceparent
  FROM leased l JOIN ${t.events} e ON e.id = l.event_id
  LEFT JOIN ${t.applied_versions} a ON a.target = l.target AND a.ordering_key = l.ordering_key
  ORDER BY l.n`;

/**
 * The transaction-local setting through which the one-message claim hands the lock step's ids to
 * the lease step (two statements, as key-locks.ts rule 3 requires, but one round trip).
 */
const claimIds = "hookinbox.claim_ids";

/** Statements prepared once per direct connection for the one-message claim, `$1`… typed. */
const prepareSql = (t: SchemaNames) => [
  `PREPARE hookinbox_claim_lock_sq(bigint, int) AS
   SELECT set_config('${claimIds}', coalesce(array_agg(l.id) FILTER (WHERE l.locked), '{}')::text, true)
   FROM (${lockSql(t)}) l`,
  `PREPARE hookinbox_claim_lease_sq(text[], text, int, bigint, bigint, text[], bigint[], text[]) AS
   ${leaseSql(t).replace("$1::text[]", `current_setting('${claimIds}')::text[]`)}`,
];

/** Direct connections that hold prepareSql's statements. */
const prepared = new WeakSet<pg.ClientBase>();

/**
 * The claim in ONE round trip on a direct connection: BEGIN, the lock step (which records the
 * ids it locked in `claimIds`), the lease step (which reads them) and COMMIT, as one simple-query
 * message of EXECUTEs of statements prepared once per connection (so nothing is planned again).
 * Each statement of the message takes its own snapshot, as the key-lock protocol requires. Null
 * behind a transaction-mode pooler, where a prepared statement does not survive the transaction.
 */
async function claimInOneTrip(
  client: pg.PoolClient,
  t: SchemaNames,
  values: readonly [number, number, readonly unknown[]],
): Promise<Record<string, unknown>[] | null> {
  if (!keepsPrepared(client)) return null;
  if (!prepared.has(client)) {
    await queryStatements(client, prepareSql(t));
    prepared.add(client);
  }
  const [now, window, lease] = values;
  const results = await queryStatements(client, [
    "BEGIN",
    inlineSql("EXECUTE hookinbox_claim_lock_sq($1, $2)", [now, window]),
    // The lease step reads every row by a key. Its plan is made once per connection (a generic
    // plan, after five custom ones), possibly while the table is nearly empty, and kept until
    // statistics change (never where autovacuum is off): made then with sequential scans, a soak's
    // claims read a 50,000-row backlog each, up to 1.4 s. Planned with sequential scans ruled
    // out, it keeps to the keys at any size. (Planning it for every claim instead made a claim
    // ~3 ms slower; the lock step keeps its plan, the pending index read in order to the LIMIT.)
    "SET LOCAL enable_seqscan = off",
    inlineSql(
      "EXECUTE hookinbox_claim_lease_sq(NULL, $1, $2, $3, $4, $5, $6, $7)",
      lease as Parameters<typeof inlineSql>[1],
    ),
    "COMMIT",
  ]);
  return results[3]?.rows ?? [];
}

/**
 * Leases up to `limit` due deliveries: the head of each ordering key with nothing in flight;
 * deliveries with something ahead are parked as `blocked` (woken when it ends, see key-locks.ts).
 * Each lease lasts its target's own lease (`targetLeaseMs`), else `leaseMs`. One transaction of
 * two statements, the second returning the claimed deliveries with their events: one round trip
 * on a direct connection (claimInOneTrip), four behind a transaction-mode pooler.
 *
 * @example
 * ```ts
 * const claimed = await claimPostgres(pool, schemaNames("hookinbox"), { workerId, limit: 10, leaseMs: 30_000, now: Date.now() });
 * ```
 */
export async function claimPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  input: ClaimInput,
): Promise<ClaimedDelivery[]> {
  const now = Math.floor(input.now);
  const leases = Object.entries(input.targetLeaseMs ?? {});
  // Candidates locked to lease `limit`: room for heads behind other heads (parked), but no more
  // than 250 beyond a large claim's own (each is a row lock, and a try of its key's lock).
  const window = Math.max(100, Math.min(input.limit * 4, input.limit + 250));
  // $2… of leaseSql.
  const lease = [
    input.workerId,
    input.limit,
    Math.floor(input.leaseMs),
    now,
    leases.map(([target]) => target),
    leases.map(([, ms]) => Math.floor(ms)),
    Array.from({ length: input.limit }, () => `att_${ulid(now)}`),
  ];
  const rows = await withRetry(() =>
    withClient(pool, async (client) => {
      // A claim for some events only (`eventIds`, rare: one serverless call) takes the long way.
      const oneTrip = input.eventIds ? null : await claimInOneTrip(client, t, [now, window, lease]);
      if (oneTrip) return oneTrip;
      // Behind a transaction-mode pooler: the same two statements, one round trip each.
      await client.query("BEGIN");
      const locked = await client.query(
        input.eventIds
          ? { text: lockSql(t, true), values: [now, window, input.eventIds] }
          : { text: lockSql(t), values: [now, window] },
      );
      const ids = locked.rows.filter((r) => r.locked).map((r) => r.id as string);
      const leased =
        ids.length === 0
          ? []
          : (await client.query({ text: leaseSql(t), values: [ids, ...lease] })).rows;
      await client.query("COMMIT");
      return leased;
    }),
  );
  return rows.map((r) => {
    const body = r.body as Buffer;
    return {
      id: r.id,
      eventId: r.event_id,
      target: r.target,
      attempt: r.attempt,
      budgetAttempt: r.attempt - r.budget_base,
      attemptId: r.attempt_id,
      leaseExpiresAt: r.lease_expires_at,
      isReplay: r.is_replay,
      replayOf: r.replay_of,
      source: r.source,
      dedupKey: r.dedup_key,
      type: r.type,
      orderingKey: r.ordering_key,
      version: r.version,
      occurredAt: r.occurred_at,
      body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
      headers: r.headers,
      appliedVersion: r.applied_version,
      runAt: r.run_at,
      traceparent: r.traceparent,
    };
  });
}
