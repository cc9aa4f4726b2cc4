import type Database from "better-sqlite3";
import { hookinboxError } from "../../../errors.ts";
import type { AttemptOutcome, CompleteInput } from "../../queue-types.ts";
import { prepareFollowUps } from "./key-queue.ts";

// Ends the worker's current attempt of a running delivery it still owns. Every terminal or
// retry transition goes through this guard, so a worker that lost its lease changes nothing.
const ownedSql = `
  SELECT event_id, target, ordering_key, version FROM deliveries
  WHERE id = @deliveryId AND status = 'running' AND lease_owner = @workerId AND attempts = @attempt`;

const endAttemptSql = `
  UPDATE attempts SET ended_at = @now, outcome = @outcome, error_message = @message, error_stack = @stack
  WHERE delivery_id = @deliveryId AND attempt = @attempt`;

/** The delivery row the guard found. */
export interface OwnedDelivery {
  event_id: string;
  target: string;
  ordering_key: string | null;
  version: number | null;
}

/**
 * Prepares what every end of an attempt shares: the ownership guard (throws HOOKINBOX_LEASE_LOST)
 * and the attempt's end record, plus the key and event follow-ups.
 *
 * @example
 * ```ts
 * const finish = prepareFinishAttempt(db);
 * const owned = finish.guard(input); // throws when the lease was lost
 * finish.endAttempt(input, "success", null);
 * ```
 */
export function prepareFinishAttempt(db: Database.Database) {
  const owned = db.prepare<[Record<string, unknown>], OwnedDelivery>(ownedSql);
  const endAttempt = db.prepare(endAttemptSql);
  const follow = prepareFollowUps(db);
  return {
    ...follow,
    guard(input: CompleteInput): OwnedDelivery {
      const row = owned.get({
        deliveryId: input.deliveryId,
        workerId: input.workerId,
        attempt: input.attempt,
      });
      if (!row) throw hookinboxError("HOOKINBOX_LEASE_LOST", input.deliveryId);
      return row;
    },
    endAttempt(
      input: CompleteInput,
      outcome: AttemptOutcome,
      error: { message: string; stack: string | null } | null,
    ): void {
      endAttempt.run({
        deliveryId: input.deliveryId,
        attempt: input.attempt,
        now: Math.floor(input.now),
        outcome,
        message: error?.message ?? null,
        stack: error?.stack ?? null,
      });
    },
  };
}
