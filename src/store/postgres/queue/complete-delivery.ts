import type pg from "pg";
import { hookinboxError } from "../../../errors.ts";
import type { CompleteInput, TransactionClient } from "../../queue-types.ts";
import { withRetry } from "../connection.ts";
import type { SchemaNames } from "../schema-names.ts";
import {
  attemptResponsesSql,
  responseJoinSql,
  responseSetSql,
  responsesValue,
} from "./attempt-responses.ts";
import { endAttempts, endingInputsSql, endingKey, endingValues } from "./end-attempt.ts";
import { wakeNextHeadSql } from "./key-locks.ts";
import { openSiblingsSql, recheckEventsPostgres, refreshEventsSql } from "./refresh-event.ts";

/**
 * Ends the deliveries `$1`…`$4` (endingInputsSql) whose lease the caller still holds as `$5`
 * (`done` or `stale`), their attempts too; a done delivery records its version as applied on its
 * key; each key's next head wakes; the events' status follows. Returns `id, worker, attempt` of
 * each attempt it ended. `unkeyedOnly` adds "without an ordering key" to the lease check: that form needs no
 * lock step (no key, no head to wake) and runs alone, outside any explicit transaction; the
 * other form runs after the lock step (end-attempt.ts). `$6`: the destinations' answers to
 * store on the attempts (attempt-responses.ts). `hints` > 0: `$7`… (that many, see eventHints)
 * hold the deliveries' event ids, so the refresh prunes events' day partitions. The unkeyed form,
 * which ends without the event locks of the lock step, also returns `event_id, recheck`: an
 * event with a sibling delivery still open, for the caller to recheck (refresh-event.ts).
 */
const completeSql = (t: SchemaNames, unkeyedOnly: boolean, hints: number) => `
  WITH ending AS (
    UPDATE ${t.deliveries} d SET status = $5::text, lease_owner = NULL, lease_expires_at = NULL,
           last_error = NULL, completed_at = i.now, updated_at = i.now
    FROM ${endingInputsSql} AS i(id, worker, attempt, now)
    WHERE d.id = i.id AND d.status = 'running' AND d.lease_owner = i.worker AND d.attempts = i.attempt
      ${unkeyedOnly ? "AND d.ordering_key IS NULL" : ""}
    RETURNING d.id, d.event_id, d.target, d.ordering_key, d.version, i.worker, i.attempt, i.now
  ), attempt AS (
    UPDATE ${t.attempts} a SET ended_at = e.now,
           outcome = CASE WHEN $5::text = 'done' THEN 'success' ELSE 'stale' END, ${responseSetSql("r")}
    FROM ending e LEFT JOIN ${attemptResponsesSql("$6")} ON ${responseJoinSql("r", "e")}
    WHERE a.delivery_id = e.id AND a.attempt = e.attempt
  ), applied AS (
    INSERT INTO ${t.applied_versions} (target, ordering_key, version)
    SELECT e.target, e.ordering_key, e.version FROM ending e
    WHERE $5::text = 'done' AND e.ordering_key IS NOT NULL AND e.version IS NOT NULL
    ON CONFLICT (target, ordering_key)
    DO UPDATE SET version = greatest(${t.applied_versions}.version, excluded.version)
  ), woken AS (
    ${wakeNextHeadSql(t, { from: "ending e", target: "e.target", key: "e.ordering_key", endingId: "e.id", now: "e.now" })}
  ), refreshed AS (
    ${refreshEventsSql(t, "ARRAY(SELECT DISTINCT event_id FROM ending)", { ids: "ARRAY(SELECT id FROM ending)", status: "$5::text" }, hints > 0 ? `ARRAY[${Array.from({ length: hints }, (_, i) => `$${7 + i}::text`).join(", ")}]` : undefined)}
  )
  SELECT e.id, e.worker, e.attempt${unkeyedOnly ? `, e.event_id, ${openSiblingsSql(t, "e")} AS recheck` : ""}
  FROM ending e`;

/**
 * The event ids of `inputs` as separate values, for `ARRAY[$7, $8, …]`: PostgreSQL prunes
 * partitions for an array of parameters, not for one array parameter. Padded (with the last id)
 * to a power of two, so a connection prepares one statement per size class, not per batch size.
 * None when some input has no event hint.
 */
function eventHints(inputs: readonly CompleteInput[]): string[] {
  const ids = inputs.map((i) => i.eventId);
  if (ids.length === 0 || ids.some((id) => id === undefined)) return [];
  const slots = 2 ** Math.ceil(Math.log2(ids.length));
  return Array.from({ length: slots }, (_, i) => ids[Math.min(i, ids.length - 1)] as string);
}

/** A key hint of null or unknown: the delivery may have no ordering key. */
const mayBeUnkeyed = (input: CompleteInput) =>
  input.orderingKey === undefined || input.orderingKey === null;

/**
 * Completes deliveries (`done` or `stale`) without handler SQL, and returns the endingKey of each attempt it ended (the
 * others' leases were lost). When every key hint says "maybe no key", one prepared statement
 * ends the unkeyed ones; the rest (and every delivery of a batch with a keyed one) end in one
 * round trip of BEGIN, lock step, change, COMMIT.
 *
 * @example
 * ```ts
 * const ended = await completeManyPostgres(pool, schemaNames("hookinbox"), inputs, "done");
 * ```
 */
export async function completeManyPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  inputs: readonly CompleteInput[],
  status: "done" | "stale",
): Promise<Set<string>> {
  let ended = new Set<string>();
  let rest = inputs;
  if (inputs.every(mayBeUnkeyed)) {
    const hints = eventHints(inputs);
    const { rows } = await withRetry(() =>
      pool.query({
        name: `hookinbox_complete_unkeyed_${hints.length}`,
        text: completeSql(t, true, hints.length),
        values: [...endingValues(inputs), status, responsesValue(inputs), ...hints],
      }),
    );
    ended = new Set(
      rows.map((r) => endingKey({ deliveryId: r.id, workerId: r.worker, attempt: r.attempt })),
    );
    await recheckEventsPostgres(
      pool,
      t,
      rows.filter((r) => r.recheck).map((r) => r.event_id),
    );
    rest = inputs.filter((i) => !ended.has(endingKey(i)));
  }
  if (rest.length === 0) return ended;
  const hints = eventHints(rest);
  const locked = await endAttempts(pool, t, rest, completeSql(t, false, hints.length), [
    ...endingValues(rest),
    status,
    responsesValue(rest),
    ...hints,
  ]);
  for (const id of locked.ended) ended.add(id);
  return ended;
}

/**
 * Completes one delivery (`done` or `stale`). With `work`, the handler's SQL runs on the same
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
  if (!work) {
    const ended = await completeManyPostgres(pool, t, [input], status);
    if (!ended.has(endingKey(input)))
      throw hookinboxError("HOOKINBOX_LEASE_LOST", input.deliveryId);
    return undefined;
  }
  const hints = eventHints([input]);
  const values = [...endingValues([input]), status, responsesValue([input]), ...hints];
  return (await endAttempts(pool, t, [input], completeSql(t, false, hints.length), values, work))
    .result;
}
