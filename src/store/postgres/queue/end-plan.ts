import type pg from "pg";
import type { EndPlan } from "../../core/end-plan.ts";
import { batchOrEachAlone, gatherBatches } from "../../core/gather-batches.ts";
import type { TransactionClient } from "../../queue-types.ts";
import { withRetry } from "../connection.ts";
import type { SchemaNames } from "../schema-names.ts";
import type { InlineValue } from "../simple-query.ts";
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
 * (`done` or `stale`), their attempts too, as `$7` (the plan's outcome); when `$8` (the plan's
 * recordApplied) each delivery records its version as applied on its key; each key's next head wakes; the events' status follows. Returns `id, worker, attempt` of
 * each attempt it ended. `unkeyedOnly` adds "without an ordering key" to the lease check: that form needs no
 * lock step (no key, no head to wake) and runs alone, outside any explicit transaction; the
 * other form runs after the lock step (end-attempt.ts). `$6`: the destinations' answers to
 * store on the attempts (attempt-responses.ts). `hints` > 0: `$9`… (that many, see eventHints)
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
           outcome = $7::text, ${responseSetSql("r")}
    FROM ending e LEFT JOIN ${attemptResponsesSql("$6")} ON ${responseJoinSql("r", "e")}
    WHERE a.delivery_id = e.id AND a.attempt = e.attempt
  ), applied AS (
    INSERT INTO ${t.applied_versions} (target, ordering_key, version)
    SELECT e.target, e.ordering_key, e.version FROM ending e
    WHERE $8::boolean AND e.ordering_key IS NOT NULL AND e.version IS NOT NULL
    ON CONFLICT (target, ordering_key)
    DO UPDATE SET version = greatest(${t.applied_versions}.version, excluded.version)
  ), woken AS (
    ${wakeNextHeadSql(t, { from: "ending e", target: "e.target", key: "e.ordering_key", endingId: "e.id", now: "e.now" })}
  ), refreshed AS (
    ${refreshEventsSql(t, "ARRAY(SELECT DISTINCT event_id FROM ending)", { ids: "ARRAY(SELECT id FROM ending)", status: "$5::text" }, hints > 0 ? `ARRAY[${Array.from({ length: hints }, (_, i) => `$${9 + i}::text`).join(", ")}]` : undefined)}
  )
  SELECT e.id, e.worker, e.attempt${unkeyedOnly ? `, e.event_id, ${openSiblingsSql(t, "e")} AS recheck` : ""}
  FROM ending e`;

/**
 * The event ids of `inputs` as separate values, for `ARRAY[$9, $10, …]`: PostgreSQL prunes
 * partitions for an array of parameters, not for one array parameter. Padded (with the last id)
 * to a power of two, so a connection prepares one statement per size class, not per batch size.
 * None when some input has no event hint.
 */
function eventHints(inputs: readonly EndPlan[]): string[] {
  const ids = inputs.map((i) => i.eventId);
  if (ids.length === 0 || ids.some((id) => id === undefined)) return [];
  const slots = 2 ** Math.ceil(Math.log2(ids.length));
  return Array.from({ length: slots }, (_, i) => ids[Math.min(i, ids.length - 1)] as string);
}

/** A key hint of null or unknown: the delivery may have no ordering key. */
const mayBeUnkeyed = (input: EndPlan) =>
  input.orderingKey === undefined || input.orderingKey === null;

/**
 * Ends completion plans of one kind (`done` or `stale`, as the first plan says), and returns the
 * endingKey of each attempt it ended (the others' leases were lost). When every key hint says
 * "maybe no key", one prepared statement ends the unkeyed ones; the rest (and every delivery of
 * a batch with a keyed one) end in one round trip of BEGIN, lock step, change, COMMIT.
 */
async function endCompletions(
  pool: pg.Pool,
  t: SchemaNames,
  inputs: readonly EndPlan[],
): Promise<Set<string>> {
  const first = inputs[0];
  if (!first) return new Set();
  const kind = [first.status, first.outcome, first.recordApplied];
  let ended = new Set<string>();
  let rest = inputs;
  if (inputs.every(mayBeUnkeyed)) {
    const hints = eventHints(inputs);
    const { rows } = await withRetry(() =>
      pool.query({
        name: `hookinbox_end_unkeyed_${hints.length}`,
        text: completeSql(t, true, hints.length),
        values: [
          ...endingValues(inputs),
          first.status,
          responsesValue(inputs),
          ...kind.slice(1),
          ...hints,
        ],
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
    first.status,
    responsesValue(rest),
    ...kind.slice(1),
    ...hints,
  ]);
  for (const id of locked.ended) ended.add(id);
  return ended;
}

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
 * A failure plan's statement (retrySql or deadSql) and its values.
 */
function failureStatement(t: SchemaNames, plan: EndPlan): [string, InlineValue[]] {
  return [
    plan.status === "dead" ? deadSql(t) : retrySql(t),
    [
      ...endingValues([plan]),
      plan.error?.message ?? null, // capped by core (core/failure-text.ts)
      plan.outcome,
      plan.error?.stack ?? null,
      plan.blockKey,
      plan.runAt,
      plan.circuitWait,
      responsesValue([plan]),
    ],
  ];
}

/** Whether `plan` ends its delivery as completed (`done` or `stale`): completeSql's plans. */
const isCompletion = (plan: EndPlan) => plan.status === "done" || plan.status === "stale";

/** The most completions one batch ends (one statement's arrays): a prefetching worker's claim. */
const maxBatch = 500;

/**
 * The end-plan primitive (core/end-plan.ts) on PostgreSQL. Completion plans (`done`, `stale`)
 * that arrive while two batches are in flight end together, in one statement or one round trip,
 * plans of one kind per batch; when a whole batch fails, each of its plans is ended alone, so
 * one bad delivery fails alone. A failure plan (`pending`, `dead`) ends alone in one round trip
 * (BEGIN, the lock step, the change, COMMIT; see end-attempt.ts). Answers, per plan, whether its
 * lease was still held.
 *
 * @example
 * ```ts
 * const run = runEndPlans(pool, schemaNames("hookinbox"));
 * const [ended] = await run([completionPlan(input, "done")]);
 * ```
 */
export function runEndPlans(
  pool: pg.Pool,
  t: SchemaNames,
): (plans: readonly EndPlan[]) => Promise<boolean[]> {
  const completeBatch = async (plans: readonly EndPlan[]) => {
    const ended = await endCompletions(pool, t, plans);
    return plans.map((plan) => ended.has(endingKey(plan)));
  };
  const batched = gatherBatches<EndPlan, boolean>(
    batchOrEachAlone<EndPlan, boolean>(
      async (plans) => (await completeBatch(plans)).map((value) => ({ ok: true, value })),
      async (plan) => (await completeBatch([plan]))[0] === true,
    ),
    { maxBatch, maxInFlight: 2 },
    (plan, batch) => batch[0] === undefined || batch[0].status === plan.status,
  );
  const fail = async (plan: EndPlan) => {
    const [sql, values] = failureStatement(t, plan);
    const { ended } = await endAttempts(pool, t, [plan], sql, values);
    return ended.has(endingKey(plan));
  };
  return (plans) =>
    Promise.all(plans.map((plan) => (isCompletion(plan) ? batched(plan) : fail(plan))));
}

/**
 * Runs one end plan and then the handler's SQL `work` on the same connection, in the same
 * transaction, after the lease check: both commit or neither. HOOKINBOX_LEASE_LOST when the
 * worker no longer holds the lease (work does not run).
 *
 * @example
 * ```ts
 * await runEndPlanWith(pool, t, completionPlan(input, "done"), async (tx) => tx.query("INSERT …", [id]));
 * ```
 */
export async function runEndPlanWith<T>(
  pool: pg.Pool,
  t: SchemaNames,
  plan: EndPlan,
  work: (tx: TransactionClient) => Promise<T>,
): Promise<T> {
  const hints = eventHints([plan]);
  const [sql, values]: [string, InlineValue[]] = isCompletion(plan)
    ? [
        completeSql(t, false, hints.length),
        [
          ...endingValues([plan]),
          plan.status,
          responsesValue([plan]),
          plan.outcome,
          plan.recordApplied,
          ...hints,
        ],
      ]
    : failureStatement(t, plan);
  return (await endAttempts(pool, t, [plan], sql, values, work)).result as T;
}
