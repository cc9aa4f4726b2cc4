import type Database from "better-sqlite3";
import { inKeyQueueSql } from "../../core/queue-rules.ts";
import { retryFallback } from "../../core/retry.ts";
import { prepareFollowUps } from "./key-queue.ts";

// "Run now": a dead delivery goes back to pending with a fresh attempt budget (it stops blocking
// its key but, being the oldest of its key, it is still the key's head); a pending one (waiting
// for its next backoff step) keeps its budget and becomes due now.
const retrySql = `
  UPDATE deliveries
  SET status = 'pending', run_at = @now, blocks_key = 0,
      budget_base = CASE status WHEN 'dead' THEN attempts ELSE budget_base END,
      alerted_at = CASE status WHEN 'dead' THEN NULL ELSE alerted_at END,
      completed_at = NULL, updated_at = @now
  WHERE id = @id AND status IN ('dead', 'pending')
  RETURNING event_id`;

// A blocked delivery waits for the head of its target and ordering key (deliveries_key_queue):
// running it now means running that head now, so the key's order holds.
const keyHeadSql = `
  SELECT h.id AS id FROM deliveries d JOIN deliveries h
    ON h.target = d.target AND h.ordering_key = d.ordering_key
   AND ${inKeyQueueSql("sqlite", "h")}
  WHERE d.id = ? AND d.status = 'blocked'
  ORDER BY h.order_version, h.id LIMIT 1`;

const existsSql = "SELECT status FROM deliveries WHERE id = ?";

/**
 * Prepares the operator's "run now" (`POST /api/deliveries/:id/retry`, `hookinbox retry`): a dead
 * delivery is retried with a fresh attempt budget, a pending one is due now, and a blocked one
 * has the delivery blocking its key run now. Returns false when there is no such delivery; throws
 * HOOKINBOX_DELIVERY_NOT_RETRYABLE when it is running or finished.
 *
 * @example
 * ```ts
 * const retry = prepareRetryDelivery(db);
 * retry("dlv_…", Date.now());
 * ```
 */
export function prepareRetryDelivery(db: Database.Database): (id: string, now: number) => boolean {
  const retry = db.prepare<[Record<string, unknown>], { event_id: string }>(retrySql);
  const head = db.prepare<[string], { id: string }>(keyHeadSql);
  const exists = db.prepare<[string], { status: string }>(existsSql);
  const follow = prepareFollowUps(db);
  const runNow = (id: string, now: number) => {
    const row = retry.get({ id, now: Math.floor(now) });
    if (row) follow.refreshEventStatus(row.event_id);
    return row !== undefined;
  };
  return (id, now) => {
    if (runNow(id, now)) return true;
    if (retryFallback(exists.get(id)?.status) === "none") return false;
    const first = head.get(id);
    // A running head is already being run; nothing to hurry.
    if (first && first.id !== id) runNow(first.id, now);
    return true;
  };
}
