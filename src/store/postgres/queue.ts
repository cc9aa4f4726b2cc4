import type pg from "pg";
import { hookinboxError } from "../../errors.ts";
import { ulid } from "../../ids.ts";
import type {
  ClaimedDelivery,
  ClaimInput,
  CompleteInput,
  FailInput,
  FailResult,
  TransactionClient,
} from "../queue-types.ts";
import { withRetry, withTransaction } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

const maxMessage = 2000;
const maxStack = 8000;

/**
 * Leases up to `limit` due deliveries (one round trip: `hookinbox_claim`), then reads their
 * events in one more.
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
  const attemptIds = Array.from({ length: input.limit }, () => `att_${ulid(now)}`);
  const claimed = await withRetry(() =>
    pool.query({
      name: "hookinbox_claim",
      text: `SELECT * FROM ${t.hookinbox_claim}($1, $2, $3, $4, $5)`,
      values: [input.workerId, input.limit, input.leaseMs, now, attemptIds],
    }),
  );
  if (claimed.rows.length === 0) return [];
  const eventIds = [...new Set(claimed.rows.map((r) => r.event_id as string))];
  const events = await withRetry(() =>
    pool.query({
      name: "hookinbox_claim_events",
      text: `SELECT id, source, dedup_key, type, occurred_at, body, headers FROM ${t.events} WHERE id = ANY($1::text[])`,
      values: [eventIds],
    }),
  );
  const byId = new Map(events.rows.map((e) => [e.id as string, e]));
  return claimed.rows.map((r) => {
    const e = byId.get(r.event_id);
    if (!e) throw new Error(`claim: event ${r.event_id} of delivery ${r.id} is missing`);
    const body = e.body as Buffer;
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
      source: e.source,
      dedupKey: e.dedup_key,
      type: e.type,
      orderingKey: r.ordering_key,
      version: r.version,
      occurredAt: e.occurred_at,
      body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
      headers: e.headers,
      appliedVersion: r.applied_version,
    };
  });
}

const completeSql = (t: SchemaNames) => `SELECT ${t.hookinbox_complete}($1, $2, $3, $4, $5) AS ok`;

/**
 * Completes a delivery (`done` or `stale`). With `work`, the handler's SQL runs on the same
 * connection and in the same transaction, after the lease check: both commit or neither.
 * HOOKINBOX_LEASE_LOST when the worker no longer holds the lease.
 *
 * @example
 * ```ts
 * await completePostgres(pool, schemaNames("hookinbox"), input, "done", async (tx) => tx.query("INSERT …", [id]));
 * ```
 */
export async function completePostgres<T>(
  pool: pg.Pool,
  t: SchemaNames,
  input: CompleteInput,
  status: "done" | "stale",
  work?: (tx: TransactionClient) => Promise<T>,
): Promise<T | undefined> {
  const values = [input.deliveryId, input.workerId, input.attempt, Math.floor(input.now), status];
  if (!work) {
    const { rows } = await withRetry(() =>
      pool.query({ name: "hookinbox_complete", text: completeSql(t), values }),
    );
    if (!rows[0]?.ok) throw hookinboxError("HOOKINBOX_LEASE_LOST", input.deliveryId);
    return undefined;
  }
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query({
      name: "hookinbox_complete",
      text: completeSql(t),
      values,
    });
    if (!rows[0]?.ok) throw hookinboxError("HOOKINBOX_LEASE_LOST", input.deliveryId);
    const tx: TransactionClient = {
      dialect: "postgres",
      connection: client,
      async query<Row>(sql: string, params: readonly unknown[] = []) {
        const result = await client.query(sql, params as unknown[]);
        return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
      },
    };
    const result = await work(tx);

    return result;
  });
}

/**
 * Ends an attempt as a failure: a retry at `retryAt`, or a dead letter.
 *
 * @example
 * ```ts
 * await failPostgres(pool, schemaNames("hookinbox"), { ...input, error, retryAt: null, outcome: "permanent", blockKey: true });
 * ```
 */
export async function failPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  input: FailInput,
): Promise<FailResult> {
  const { rows } = await withRetry(() =>
    pool.query({
      name: "hookinbox_fail",
      text: `SELECT ${t.hookinbox_fail}($1, $2, $3, $4, $5, $6, $7, $8, $9) AS dead`,
      values: [
        input.deliveryId,
        input.workerId,
        input.attempt,
        Math.floor(input.now),
        input.error.message.slice(0, maxMessage),
        input.error.stack?.slice(0, maxStack) ?? null,
        input.retryAt === null ? null : Math.floor(input.retryAt),
        input.outcome,
        input.blockKey,
      ],
    }),
  );
  const dead = rows[0]?.dead;
  if (dead === null || dead === undefined)
    throw hookinboxError("HOOKINBOX_LEASE_LOST", input.deliveryId);
  return { dead };
}

/**
 * The lease operations: heartbeat, release of unstarted claims, rescue of expired leases, and
 * the next due time.
 *
 * @example
 * ```ts
 * await leasesPostgres(pool, schemaNames("hookinbox")).rescue(Date.now());
 * ```
 */
export function leasesPostgres(pool: pg.Pool, t: SchemaNames) {
  return {
    async extend(workerId: string, ids: readonly string[], until: number): Promise<string[]> {
      if (ids.length === 0) return [];
      const { rows } = await withRetry(() =>
        pool.query(
          `UPDATE ${t.deliveries} SET lease_expires_at = $3
           WHERE id = ANY($1::text[]) AND status = 'running' AND lease_owner = $2 RETURNING id`,
          [ids, workerId, Math.floor(until)],
        ),
      );
      return rows.map((r) => r.id);
    },
    async release(workerId: string, ids: readonly string[], now: number): Promise<number> {
      if (ids.length === 0) return 0;
      const { rows } = await withRetry(() =>
        pool.query(
          `WITH released AS (
             UPDATE ${t.deliveries} SET status = 'pending', attempts = attempts - 1, lease_owner = NULL,
                    lease_expires_at = NULL, run_at = $3, updated_at = $3
             WHERE id = ANY($1::text[]) AND status = 'running' AND lease_owner = $2
             RETURNING id, attempts + 1 AS attempt
           ), dropped AS (
             DELETE FROM ${t.attempts} a USING released r WHERE a.delivery_id = r.id AND a.attempt = r.attempt
           )
           SELECT count(*)::int AS n FROM released`,
          [ids, workerId, Math.floor(now)],
        ),
      );
      return rows[0]?.n ?? 0;
    },
    async rescue(now: number): Promise<number> {
      const { rows } = await withRetry(() =>
        pool.query(
          `WITH expired AS (
             UPDATE ${t.deliveries} SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, run_at = $1,
                    last_error = 'lease expired (worker crashed or stalled)', updated_at = $1
             WHERE status = 'running' AND lease_expires_at < $1
             RETURNING id, attempts
           ), ended AS (
             UPDATE ${t.attempts} a SET ended_at = $1, outcome = 'lease-expired', error_message = 'lease expired'
             FROM expired e WHERE a.delivery_id = e.id AND a.attempt = e.attempts AND a.outcome = 'running'
           )
           SELECT count(*)::int AS n FROM expired`,
          [Math.floor(now)],
        ),
      );
      return rows[0]?.n ?? 0;
    },
    async abandon(input: CompleteInput & { error: string }): Promise<void> {
      await withRetry(() =>
        pool.query(
          `WITH held AS (
             UPDATE ${t.deliveries} SET last_error = $3, updated_at = $5
             WHERE id = $1 AND status = 'running' AND lease_owner = $2 RETURNING id
           )
           UPDATE ${t.attempts} a SET error_message = $3
           FROM held h WHERE a.delivery_id = h.id AND a.attempt = $4 AND a.outcome = 'running'`,
          [input.deliveryId, input.workerId, input.error, input.attempt, Math.floor(input.now)],
        ),
      );
    },
    async nextDueAt(): Promise<number | null> {
      const { rows } = await withRetry(() =>
        pool.query(`SELECT min(run_at) AS at FROM ${t.deliveries} WHERE status = 'pending'`),
      );
      return rows[0]?.at ?? null;
    },
  };
}
