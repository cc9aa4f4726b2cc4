import type Database from "better-sqlite3";
import type { CompleteInput } from "../../queue-types.ts";
import { prepareFinishAttempt } from "./end-attempt.ts";

const doneSql = `
  UPDATE deliveries
  SET status = @status, lease_owner = NULL, lease_expires_at = NULL, last_error = NULL,
      completed_at = @now, updated_at = @now
  WHERE id = @deliveryId`;

// The stale guard's reference only moves forward.
const appliedSql = `
  INSERT INTO applied_versions (target, ordering_key, version) VALUES (@target, @orderingKey, @version)
  ON CONFLICT (target, ordering_key) DO UPDATE SET version = max(version, excluded.version)`;

/**
 * Prepares the end of a successful attempt (`done`) or of a skipped stale one (`stale`), run
 * inside the caller's transaction after the handler's own SQL: guard the lease, mark the delivery,
 * advance the key's applied version, wake the key's next head, refresh the event's status.
 *
 * @example
 * ```ts
 * const complete = prepareCompleteDelivery(db);
 * complete(input, "done");
 * ```
 */
export function prepareCompleteDelivery(
  db: Database.Database,
): (input: CompleteInput, status: "done" | "stale") => void {
  const finish = prepareFinishAttempt(db);
  const done = db.prepare(doneSql);
  const applied = db.prepare(appliedSql);
  return (input, status) => {
    const owned = finish.guard(input);
    const now = Math.floor(input.now);
    done.run({ deliveryId: input.deliveryId, status, now });
    finish.endAttempt(input, status === "done" ? "success" : "stale", null);
    if (status === "done" && owned.ordering_key !== null && owned.version !== null) {
      applied.run({
        target: owned.target,
        orderingKey: owned.ordering_key,
        version: owned.version,
      });
    }
    finish.wakeNextHead(owned.target, owned.ordering_key, now);
    finish.refreshEventStatus(owned.event_id);
  };
}
