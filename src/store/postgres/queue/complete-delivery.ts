import type pg from "pg";
import { hookinboxError } from "../../../errors.ts";
import type { CompleteInput, TransactionClient } from "../../queue-types.ts";
import { withRetry, withTransaction } from "../connection.ts";
import type { SchemaNames } from "../schema-names.ts";
import { lockEndingDelivery } from "./end-attempt.ts";
import { wakeNextHeadSql } from "./key-locks.ts";
import { refreshEventsSql } from "./refresh-event.ts";

/**
 * After the lock step: the delivery ends as $2 (`done` or `stale`), its attempt too; a done
 * delivery records its version as applied on its key; the key's next head wakes; the event's
 * status follows. Placeholders: $1 delivery, $2 status, $3 now, $4 attempt, $5 target, $6 key,
 * $7 version, $8 event.
 */
const completeSql = (t: SchemaNames) => `
  WITH ended AS (
    UPDATE ${t.deliveries} SET status = $2::text, lease_owner = NULL, lease_expires_at = NULL,
           last_error = NULL, completed_at = $3, updated_at = $3
    WHERE id = $1
  ), attempt AS (
    UPDATE ${t.attempts} SET ended_at = $3, outcome = CASE WHEN $2::text = 'done' THEN 'success' ELSE 'stale' END
    WHERE delivery_id = $1 AND attempt = $4
  ), applied AS (
    INSERT INTO ${t.applied_versions} (target, ordering_key, version)
    SELECT $5::text, $6::text, $7::double precision
    WHERE $2::text = 'done' AND $6::text IS NOT NULL AND $7::double precision IS NOT NULL
    ON CONFLICT (target, ordering_key)
    DO UPDATE SET version = greatest(${t.applied_versions}.version, excluded.version)
  ), woken AS (
    ${wakeNextHeadSql(t, { target: "$5::text", key: "$6::text", endingId: "$1", now: "$3" })}
  ), refreshed AS (
    ${refreshEventsSql(t, "ARRAY[$8::text]", { id: "$1", status: "$2::text" })}
  )
  SELECT 1`;

/**
 * A delivery without an ordering key has no key lock to take and no head to wake: one statement
 * with the lease check in its WHERE ends it, outside any explicit transaction. It changes nothing
 * for a delivery with a key (or a lost lease) and returns no row: the caller takes the locked
 * path. $1 delivery, $2 status, $3 now, $4 attempt, $5 worker.
 */
const completeUnkeyedSql = (t: SchemaNames) => `
  WITH ended AS (
    UPDATE ${t.deliveries} SET status = $2::text, lease_owner = NULL, lease_expires_at = NULL,
           last_error = NULL, completed_at = $3, updated_at = $3
    WHERE id = $1 AND status = 'running' AND lease_owner = $5 AND attempts = $4 AND ordering_key IS NULL
    RETURNING event_id
  ), attempt AS (
    UPDATE ${t.attempts} SET ended_at = $3, outcome = CASE WHEN $2::text = 'done' THEN 'success' ELSE 'stale' END
    WHERE delivery_id = $1 AND attempt = $4 AND EXISTS (SELECT 1 FROM ended)
  ), refreshed AS (
    ${refreshEventsSql(t, "ARRAY(SELECT event_id FROM ended)", { id: "$1", status: "$2::text" })}
  )
  SELECT event_id FROM ended`;

/**
 * Completes a delivery (`done` or `stale`) in one transaction: the lock step, then the change.
 * With `work`, the handler's SQL runs on the same connection and in the same transaction, after
 * the lease check: both commit or neither. HOOKINBOX_LEASE_LOST when the worker no longer holds
 * the lease.
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
  const unkeyed = {
    name: "hookinbox_complete_unkeyed",
    text: completeUnkeyedSql(t),
    values: [input.deliveryId, status, Math.floor(input.now), input.attempt, input.workerId],
  };
  const mayBeUnkeyed = input.orderingKey === undefined || input.orderingKey === null;
  const end = async (client: pg.PoolClient, tryUnkeyed: boolean) => {
    if (tryUnkeyed && (await client.query(unkeyed)).rows.length > 0) return;
    const ending = await lockEndingDelivery(client, t, input);
    if (!ending) throw hookinboxError("HOOKINBOX_LEASE_LOST", input.deliveryId);
    await client.query({
      name: "hookinbox_complete",
      text: completeSql(t),
      values: [
        input.deliveryId,
        status,
        Math.floor(input.now),
        input.attempt,
        ending.target,
        ending.orderingKey,
        ending.version,
        ending.eventId,
      ],
    });
  };
  const run = async (client: pg.PoolClient, tryUnkeyed = mayBeUnkeyed) => {
    await end(client, tryUnkeyed);
    if (!work) return undefined;
    const tx: TransactionClient = {
      dialect: "postgres",
      connection: client,
      async query<Row>(sql: string, params: readonly unknown[] = []) {
        const result = await client.query(sql, params as unknown[]);
        return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
      },
    };
    return work(tx);
  };
  if (!work) {
    // Outside a transaction: one round trip, as the PL/pgSQL function was.
    if (mayBeUnkeyed && (await withRetry(() => pool.query(unkeyed))).rows.length > 0)
      return undefined;
    // Without the handler's SQL the whole transaction is safe to repeat (a repeat whose first
    // try committed finds the lease gone: HOOKINBOX_LEASE_LOST, as before).
    return withRetry(() => withTransaction(pool, (client) => run(client, false)));
  }
  return withTransaction(pool, run);
}
