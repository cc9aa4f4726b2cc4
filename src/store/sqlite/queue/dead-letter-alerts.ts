import type Database from "better-sqlite3";
import type { DeadLetterAlert } from "../../queue-types.ts";

const pendingSql = `
  SELECT d.id AS deliveryId, d.event_id AS eventId, d.target, e.source, e.type, d.attempts,
         d.last_error AS lastError, d.ordering_key AS orderingKey, d.blocks_key AS blocksKey,
         CASE WHEN d.blocks_key = 1 THEN
           (SELECT count(*) FROM deliveries p
            WHERE p.target = d.target AND p.ordering_key = d.ordering_key
              AND p.status IN ('pending', 'blocked'))
         ELSE 0 END AS parked
  FROM deliveries d JOIN events e ON e.id = d.event_id
  WHERE d.status = 'dead' AND d.alerted_at IS NULL
  ORDER BY d.id LIMIT ?`;

const markSql = `
  UPDATE deliveries SET alerted_at = @now
  WHERE id IN (SELECT value FROM json_each(@ids)) AND status = 'dead' AND alerted_at IS NULL`;

/**
 * Prepares the dead-letter alert outbox: dead deliveries without a confirmed alert, and the mark
 * that confirms one. The worker alerts right after it dead-letters and marks after the alert
 * hook returned, and a sweep retries unconfirmed ones, so each dead letter alerts once in
 * normal operation and at least once across crashes.
 *
 * @example
 * ```ts
 * const alerts = prepareDeadLetterAlerts(db);
 * for (const a of alerts.pending(100)) await notify(a);
 * ```
 */
export function prepareDeadLetterAlerts(db: Database.Database) {
  const pending = db.prepare<[number], Omit<DeadLetterAlert, "blocksKey"> & { blocksKey: number }>(
    pendingSql,
  );
  const mark = db.prepare(markSql);
  return {
    pending: (limit: number): DeadLetterAlert[] =>
      pending.all(limit).map((row) => ({ ...row, blocksKey: row.blocksKey === 1 })),
    mark(ids: readonly string[], now: number): void {
      if (ids.length > 0) mark.run({ ids: JSON.stringify(ids), now: Math.floor(now) });
    },
  };
}
