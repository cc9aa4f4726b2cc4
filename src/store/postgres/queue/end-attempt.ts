import type pg from "pg";
import { hookinboxError } from "../../../errors.ts";
import { sqlTag } from "../../core/sql-template.ts";
import type { CompleteInput, TransactionClient } from "../../queue-types.ts";
import { withClient, withRetry } from "../connection.ts";
import type { SchemaNames } from "../schema-names.ts";
import { type InlineValue, inlineSql, queryStatements } from "../simple-query.ts";
import { eventLockId, keyLockId } from "./key-locks.ts";

/**
 * The running deliveries an end statement names, as parallel arrays: `$1` ids, `$2` workers,
 * `$3` attempts, `$4` times (ms). Every end statement (completion, retry, dead letter) starts with
 * these four; its own values follow.
 */
export const endingInputsSql = "unnest($1::text[], $2::text[], $3::int[], $4::bigint[])";

/**
 * The lock step shared by completion and failure (see key-locks.ts): the advisory lock of every
 * key among `$1`…`$4` (endingInputsSql) whose delivery the caller still holds, then of each of
 * their events (rule 6), waited for in that order and in lock-id order, so two batches never
 * wait for each other in a cycle. The statement that changes the keys must come after this one,
 * in the same transaction, and check the leases itself.
 */
const lockSql = (t: SchemaNames) => `
  WITH held AS (
    SELECT d.target, d.ordering_key, d.event_id
    FROM ${endingInputsSql} AS i(id, worker, attempt, now)
    JOIN ${t.deliveries} d ON d.id = i.id AND d.status = 'running' AND d.lease_owner = i.worker
                          AND d.attempts = i.attempt
  )
  SELECT pg_advisory_xact_lock(k.lock_id) FROM (
    SELECT DISTINCT u.kind, u.lock_id FROM (
      SELECT 0 AS kind, ${keyLockId("h.target", "h.ordering_key")} AS lock_id
      FROM held h WHERE h.ordering_key IS NOT NULL
      UNION ALL
      SELECT 1, ${eventLockId("h.event_id")} FROM held h
    ) u ORDER BY u.kind, u.lock_id OFFSET 0) k`;

/**
 * What an end statement returns for each attempt it ended (its `id, worker, attempt` columns),
 * and what a caller looks itself up by: the same delivery named twice in one batch, once by a
 * worker that lost its lease, ends once and only for the holder.
 *
 * @example
 * ```ts
 * if (!ended.has(endingKey(input))) throw hookinboxError("HOOKINBOX_LEASE_LOST", input.deliveryId);
 * ```
 */
export function endingKey(ended: {
  deliveryId: string;
  workerId: string;
  attempt: number;
}): string {
  return `${ended.deliveryId}\u0000${ended.workerId}\u0000${ended.attempt}`;
}

/**
 * `$1`…`$4` of endingInputsSql for `inputs`, times floored to whole milliseconds.
 *
 * @example
 * ```ts
 * const values = [...endingValues([input]), "done"];
 * ```
 */
export function endingValues(inputs: readonly CompleteInput[]): InlineValue[] {
  return [
    inputs.map((i) => i.deliveryId),
    inputs.map((i) => i.workerId),
    inputs.map((i) => i.attempt),
    inputs.map((i) => Math.floor(i.now)),
  ];
}

/**
 * Ends attempts in one transaction: BEGIN, the lock step, then `changeSql` (which checks each
 * lease and returns `id, worker, attempt` of every attempt it ended), sent as ONE simple-query message.
 * Without `work`, COMMIT rides in the same message: one round trip, safe to repeat (a repeat
 * whose first try committed finds the leases gone). With `work` (a handler's SQL, run after the
 * change on the same connection), COMMIT follows it: both commit or neither, and a lost lease
 * (HOOKINBOX_LEASE_LOST, only with exactly one input) stops before `work` runs. Returns the
 * endingKey of each attempt ended and `work`'s result.
 *
 * @example
 * ```ts
 * const { ended } = await endAttempts(pool, t, inputs, completeSql(t), [...endingValues(inputs), "done"]);
 * ```
 */
export async function endAttempts<T>(
  pool: pg.Pool,
  t: SchemaNames,
  inputs: readonly CompleteInput[],
  changeSql: string,
  values: readonly InlineValue[],
  work?: (tx: TransactionClient) => Promise<T>,
): Promise<{ ended: Set<string>; result: T | undefined }> {
  const statements = [
    "BEGIN",
    inlineSql(lockSql(t), endingValues(inputs)),
    inlineSql(changeSql, values),
  ];
  const idsOf = (results: pg.QueryResult[]) =>
    new Set<string>(
      (results[2]?.rows ?? []).map((r) =>
        endingKey({ deliveryId: r.id, workerId: r.worker, attempt: r.attempt }),
      ),
    );
  if (!work) {
    const results = await withRetry(() =>
      withClient(pool, (client) => queryStatements(client, [...statements, "COMMIT"])),
    );
    return { ended: idsOf(results), result: undefined };
  }
  return withClient(pool, async (client) => {
    const ended = idsOf(await queryStatements(client, statements));
    const only = inputs[0];
    if (inputs.length !== 1 || !only) throw new RangeError("work needs exactly one delivery");
    if (!ended.has(endingKey(only))) throw hookinboxError("HOOKINBOX_LEASE_LOST", only.deliveryId);
    const result = await work(transactionClient(client));
    await client.query("COMMIT");
    return { ended, result };
  });
}

/** A handler's view of the connection and transaction its delivery ends in. */
const transactionClient = (client: pg.PoolClient): TransactionClient => {
  const query = async <Row>(sql: string, params: readonly unknown[] = []) => {
    const result = await client.query(sql, params as unknown[]);
    return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
  };
  return { dialect: "postgres", connection: client, query, sql: sqlTag("postgres", query) };
};
