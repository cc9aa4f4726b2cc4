import type pg from "pg";
import { hookinboxError } from "../../../errors.ts";
import type { FailInput, FailResult } from "../../queue-types.ts";
import type { SchemaNames } from "../schema-names.ts";
import {
  attemptResponsesSql,
  responseJoinSql,
  responseSetSql,
  responsesValue,
} from "./attempt-responses.ts";
import { endAttempts, endingInputsSql, endingKey, endingValues } from "./end-attempt.ts";
import { wakeNextHeadSql } from "./key-locks.ts";
import { refreshEventsSql } from "./refresh-event.ts";

/**
 * A retry: each of the deliveries `$1`…`$4` (endingInputsSql) whose lease the caller still holds
 * is pending again at `$9`, its attempt ends as `$6`. Its key keeps it as head (nothing wakes)
 * and its event stays pending; `$10` is its circuit_wait mark (a "down" failure: due at once
 * when the destination's circuit closes). `$5` message, `$7` stack, `$8` unused here, `$11` the
 * destination's answer to store on the attempt (attempt-responses.ts). Returns `id, worker, attempt`.
 */
const retrySql = (t: SchemaNames) => `
  WITH ending AS (
    UPDATE ${t.deliveries} d SET status = 'pending', run_at = $9::bigint, lease_owner = NULL,
           lease_expires_at = NULL, last_error = $5::text, updated_at = i.now,
           circuit_wait = $10::boolean
    FROM ${endingInputsSql} AS i(id, worker, attempt, now)
    WHERE d.id = i.id AND d.status = 'running' AND d.lease_owner = i.worker AND d.attempts = i.attempt
    RETURNING d.id, i.worker, i.attempt, i.now
  ), attempt AS (
    UPDATE ${t.attempts} a SET ended_at = e.now, outcome = $6::text, error_message = $5::text,
           error_stack = $7::text, ${responseSetSql("r")}
    FROM ending e LEFT JOIN ${attemptResponsesSql("$11")} ON ${responseJoinSql("r", "e")}
    WHERE a.delivery_id = e.id AND a.attempt = e.attempt
  )
  SELECT id, worker, attempt FROM ending`;

/**
 * A dead letter: each of the deliveries `$1`…`$4` whose lease the caller still holds is dead, its
 * attempt ends as `$6`; it keeps blocking its key when `$8` and it has one, otherwise the key's
 * next head wakes. The events' status follows. `$5` message, `$7` stack, `$9` and `$10` unused
 * here, `$11` the destination's answer (attempt-responses.ts). Returns `id, worker, attempt`.
 */
const deadSql = (t: SchemaNames) => `
  WITH ending AS (
    UPDATE ${t.deliveries} d SET status = 'dead', lease_owner = NULL, lease_expires_at = NULL,
           last_error = $5::text, blocks_key = ($8::boolean AND d.ordering_key IS NOT NULL),
           completed_at = i.now, updated_at = i.now
    FROM ${endingInputsSql} AS i(id, worker, attempt, now)
    WHERE d.id = i.id AND d.status = 'running' AND d.lease_owner = i.worker AND d.attempts = i.attempt
    RETURNING d.id, d.event_id, d.target, d.ordering_key, d.blocks_key, i.worker, i.attempt, i.now
  ), attempt AS (
    UPDATE ${t.attempts} a SET ended_at = e.now, outcome = $6::text, error_message = $5::text,
           error_stack = $7::text, ${responseSetSql("r")}
    FROM ending e LEFT JOIN ${attemptResponsesSql("$11")} ON ${responseJoinSql("r", "e")}
    WHERE a.delivery_id = e.id AND a.attempt = e.attempt
  ), woken AS (
    ${wakeNextHeadSql(t, { from: "ending e", target: "e.target", key: "(CASE WHEN e.blocks_key THEN NULL ELSE e.ordering_key END)", endingId: "e.id", now: "e.now" })}
  ), refreshed AS (
    ${refreshEventsSql(t, "ARRAY(SELECT DISTINCT event_id FROM ending)", { ids: "ARRAY(SELECT id FROM ending)", status: "'dead'" })}
  )
  SELECT id, worker, attempt FROM ending`;

/**
 * Ends an attempt as a failure, in one round trip (BEGIN, the lock step, the change, COMMIT; see
 * end-attempt.ts): a retry at `retryAt`, or a dead letter. HOOKINBOX_LEASE_LOST when the worker
 * no longer holds the lease.
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
  const dead = input.retryAt === null;
  const values = [
    ...endingValues([input]),
    input.error.message, // capped by the store (core/failure-text.ts)
    input.outcome,
    input.error.stack ?? null,
    input.blockKey,
    input.retryAt === null ? null : Math.floor(input.retryAt),
    input.circuitWait === true,
    responsesValue([input]),
  ];
  const { ended } = await endAttempts(pool, t, [input], dead ? deadSql(t) : retrySql(t), values);
  if (!ended.has(endingKey(input))) throw hookinboxError("HOOKINBOX_LEASE_LOST", input.deliveryId);
  return { dead };
}
