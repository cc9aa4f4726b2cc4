import type Database from "better-sqlite3";
import type { FailInput, FailResult } from "../../queue-types.ts";
import { prepareFinishAttempt } from "./end-attempt.ts";

const retrySql = `
  UPDATE deliveries
  SET status = 'pending', run_at = @retryAt, lease_owner = NULL, lease_expires_at = NULL,
      last_error = @message, updated_at = @now, circuit_wait = @circuitWait
  WHERE id = @deliveryId`;

const deadSql = `
  UPDATE deliveries
  SET status = 'dead', lease_owner = NULL, lease_expires_at = NULL, last_error = @message,
      blocks_key = @blocksKey, completed_at = @now, updated_at = @now
  WHERE id = @deliveryId`;

/**
 * Prepares the end of a failed attempt: a retry at `retryAt` (the delivery stays the head of its
 * key, so the key waits for it; `circuitWait` marks it for its destination's closing circuit),
 * or a dead letter (`retryAt` null) that either keeps blocking
 * its key (`blockKey`) or lets the key's next head run.
 *
 * @example
 * ```ts
 * const fail = prepareFailDelivery(db);
 * fail({ deliveryId, workerId, attempt, now, error, retryAt: now + 5000, outcome: "error", blockKey: true });
 * ```
 */
export function prepareFailDelivery(db: Database.Database): (input: FailInput) => FailResult {
  const finish = prepareFinishAttempt(db);
  const retry = db.prepare(retrySql);
  const dead = db.prepare(deadSql);
  return (input) => {
    const owned = finish.guard(input);
    const now = Math.floor(input.now);
    // Capped by the store before it gets here (core/failure-text.ts).
    const error = input.error;
    const message = error.message;
    if (input.retryAt !== null) {
      retry.run({
        deliveryId: input.deliveryId,
        retryAt: Math.floor(input.retryAt),
        message,
        now,
        circuitWait: input.circuitWait === true ? 1 : 0,
      });
      finish.endAttempt(input, input.outcome, error);
      return { dead: false };
    }
    const blocksKey = input.blockKey && owned.ordering_key !== null ? 1 : 0;
    dead.run({ deliveryId: input.deliveryId, message, blocksKey, now });
    finish.endAttempt(input, input.outcome, error);
    if (!blocksKey) finish.wakeNextHead(owned.target, owned.ordering_key, now);
    finish.refreshEventStatus(owned.event_id);
    return { dead: true };
  };
}
