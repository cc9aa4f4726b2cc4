import type Database from "better-sqlite3";
import { hookinboxError } from "../../../errors.ts";
import { prepareFollowUps } from "./key-queue.ts";

// A dead delivery goes back to pending with a fresh attempt budget; it stops blocking its key
// but, being the oldest of its key, it is still the key's head.
const retrySql = `
  UPDATE deliveries
  SET status = 'pending', run_at = @now, blocks_key = 0, budget_base = attempts, alerted_at = NULL,
      completed_at = NULL, updated_at = @now
  WHERE id = @id AND status = 'dead'
  RETURNING event_id`;

const existsSql = "SELECT status FROM deliveries WHERE id = ?";

/**
 * Prepares the operator's retry of a dead-lettered delivery (`POST /api/deliveries/:id/retry`,
 * `hookinbox dlq retry`). Returns false when there is no such delivery; throws
 * HOOKINBOX_DELIVERY_NOT_RETRYABLE when it is not dead.
 *
 * @example
 * ```ts
 * const retry = prepareRetryDelivery(db);
 * retry("dlv_…", Date.now());
 * ```
 */
export function prepareRetryDelivery(db: Database.Database): (id: string, now: number) => boolean {
  const retry = db.prepare<[Record<string, unknown>], { event_id: string }>(retrySql);
  const exists = db.prepare<[string], { status: string }>(existsSql);
  const follow = prepareFollowUps(db);
  return (id, now) => {
    const row = retry.get({ id, now: Math.floor(now) });
    if (row) {
      follow.refreshEventStatus(row.event_id);
      return true;
    }
    const current = exists.get(id);
    if (!current) return false;
    throw hookinboxError("HOOKINBOX_DELIVERY_NOT_RETRYABLE", `delivery is ${current.status}`);
  };
}
