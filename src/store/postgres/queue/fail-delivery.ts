import type pg from "pg";
import { hookinboxError } from "../../../errors.ts";
import type { FailInput, FailResult } from "../../queue-types.ts";
import { withRetry, withTransaction } from "../connection.ts";
import type { SchemaNames } from "../schema-names.ts";
import { lockEndingDelivery } from "./end-attempt.ts";
import { wakeNextHeadSql } from "./key-locks.ts";
import { refreshEventsSql } from "./refresh-event.ts";

const maxMessage = 2000;
const maxStack = 8000;

/**
 * A retry: the attempt ends as $5, the delivery is pending again at $7. Its key keeps it as head
 * (nothing wakes) and its event stays pending. $1 delivery, $2 attempt, $3 now, $4 message, $6 stack.
 */
const retrySql = (t: SchemaNames) => `
  WITH attempt AS (
    UPDATE ${t.attempts} SET ended_at = $3, outcome = $5, error_message = $4, error_stack = $6
    WHERE delivery_id = $1 AND attempt = $2
  )
  UPDATE ${t.deliveries} SET status = 'pending', run_at = $7, lease_owner = NULL, lease_expires_at = NULL,
         last_error = $4, updated_at = $3
  WHERE id = $1`;

/**
 * A dead letter: the attempt ends as $5, the delivery is dead and keeps blocking its key when $7;
 * otherwise the key's next head wakes. The event's status follows. $8 target, $9 key, $10 event.
 */
const deadSql = (t: SchemaNames) => `
  WITH attempt AS (
    UPDATE ${t.attempts} SET ended_at = $3, outcome = $5, error_message = $4, error_stack = $6
    WHERE delivery_id = $1 AND attempt = $2
  ), dead AS (
    UPDATE ${t.deliveries} SET status = 'dead', lease_owner = NULL, lease_expires_at = NULL, last_error = $4,
           blocks_key = $7, completed_at = $3, updated_at = $3
    WHERE id = $1
  ), woken AS (
    ${wakeNextHeadSql(t, { target: "$8::text", key: "(CASE WHEN $7 THEN NULL ELSE $9::text END)", endingId: "$1", now: "$3" })}
  ), refreshed AS (
    ${refreshEventsSql(t, "ARRAY[$10::text]", { id: "$1", status: "'dead'" })}
  )
  SELECT 1`;

/**
 * Ends an attempt as a failure, in one transaction (the lock step, then the change): a retry at
 * `retryAt`, or a dead letter. HOOKINBOX_LEASE_LOST when the worker no longer holds the lease.
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
  const now = Math.floor(input.now);
  const message = input.error.message.slice(0, maxMessage);
  const stack = input.error.stack?.slice(0, maxStack) ?? null;
  return withRetry(() =>
    withTransaction(pool, async (client) => {
      const ending = await lockEndingDelivery(client, t, input);
      if (!ending) throw hookinboxError("HOOKINBOX_LEASE_LOST", input.deliveryId);
      const common = [input.deliveryId, input.attempt, now, message, input.outcome, stack];
      if (input.retryAt !== null) {
        await client.query({
          name: "hookinbox_fail_retry",
          text: retrySql(t),
          values: [...common, Math.floor(input.retryAt)],
        });
        return { dead: false };
      }
      const blocks = input.blockKey && ending.orderingKey !== null;
      await client.query({
        name: "hookinbox_fail_dead",
        text: deadSql(t),
        values: [...common, blocks, ending.target, ending.orderingKey, ending.eventId],
      });
      return { dead: true };
    }),
  );
}
