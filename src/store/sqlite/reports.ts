import type Database from "better-sqlite3";
import type { BlockedKey, DeadLetterAlert, QueueGauges, StuckReport } from "../queue-types.ts";
import { type DeliveryRow, deliveryColumns, toDeliveryView } from "./deliveries.ts";
import { prepareEffects } from "./effects.ts";

const expiredSql = `
  SELECT ${deliveryColumns} FROM deliveries
  WHERE status = 'running' AND lease_expires_at < @now ORDER BY lease_expires_at LIMIT @limit`;

// Oldest first within each unfinished status (events_status_id); received_at is checked per row.
const oldSql = `
  SELECT id, source, type, status, received_at FROM events
  WHERE status = @status AND received_at < @before ORDER BY id LIMIT @limit`;

// Running deliveries whose current attempt was abandoned (markAbandoned wrote its error).
const abandonedSql = `
  SELECT ${deliveryColumns} FROM deliveries
  WHERE status = 'running' AND EXISTS (
    SELECT 1 FROM attempts a WHERE a.delivery_id = deliveries.id AND a.attempt = deliveries.attempts
      AND a.outcome = 'running' AND a.error_message IS NOT NULL)
  ORDER BY id LIMIT @limit`;

// Only keys with something parked: a blocking dead letter with nothing behind it stalls nothing yet.
const blockedSql = `
  SELECT * FROM (
    SELECT d.id AS deliveryId, d.event_id AS eventId, d.target, e.source, e.type,
           d.ordering_key AS orderingKey, d.last_error AS lastError,
           (SELECT count(*) FROM deliveries p
            WHERE p.target = d.target AND p.ordering_key = d.ordering_key
              AND p.status IN ('pending', 'blocked')) AS parked
    FROM deliveries d JOIN events e ON e.id = d.event_id
    WHERE d.status = 'dead' AND d.blocks_key = 1 AND d.ordering_key IS NOT NULL)
  WHERE parked > 0 ORDER BY deliveryId LIMIT @limit`;

/**
 * Prepares `hookinbox stuck`: leases past expiry (a worker died and nothing rescued yet),
 * handlers abandoned after their timeout, ordering keys blocked by a dead delivery (with how many
 * wait behind it), effects held for a human, and events older than a threshold still not done.
 *
 * @example
 * ```ts
 * const stuck = prepareStuck(db);
 * stuck({ now: Date.now(), olderThanMs: 3_600_000, limit: 50 });
 * ```
 */
export function prepareStuck(
  db: Database.Database,
): (input: { now: number; olderThanMs: number; limit: number }) => StuckReport {
  const expired = db.prepare<[Record<string, unknown>], DeliveryRow>(expiredSql);
  const old = db.prepare<
    [Record<string, unknown>],
    { id: string; source: string; type: string | null; status: string; received_at: number }
  >(oldSql);
  const effects = prepareEffects(db);
  const abandoned = db.prepare<[Record<string, unknown>], DeliveryRow>(abandonedSql);
  const blocked = db.prepare<[Record<string, unknown>], BlockedKey>(blockedSql);
  return ({ now, olderThanMs, limit }) => {
    const before = Math.floor(now - olderThanMs);
    const oldUndone = ["pending", "dead"].flatMap((status) => old.all({ status, before, limit }));
    return {
      expiredLeases: expired.all({ now: Math.floor(now), limit }).map((row) => toDeliveryView(row)),
      abandoned: abandoned.all({ limit }).map((row) => toDeliveryView(row)),
      blockedKeys: blocked.all({ limit }),
      heldEffects: effects.list({ status: "held" }).slice(0, limit),
      oldUndone: oldUndone.slice(0, limit).map((e) => ({
        id: e.id,
        source: e.source,
        type: e.type,
        status: e.status,
        receivedAt: new Date(e.received_at).toISOString(),
      })),
    };
  };
}

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

// deliveries_status_id narrows to the unfinished and dead rows; done rows are never read.
const deliveriesSql = `
  SELECT e.source AS source, d.target AS target, d.status AS status, count(*) AS count,
         min(d.created_at) AS oldestCreatedAt
  FROM deliveries d INDEXED BY deliveries_status_id JOIN events e ON e.id = d.event_id
  WHERE d.status IN ('pending', 'blocked', 'running', 'dead')
  GROUP BY e.source, d.target, d.status`;

const heldSql = `
  SELECT target, count(*) AS count FROM effects WHERE status = 'held' GROUP BY target`;

/**
 * Prepares the figures `/metrics` reads from the store at scrape time (so they are the same in
 * every process and survive restarts): unfinished and dead deliveries per source, target and
 * status with the oldest one's creation time, and held effects per target.
 *
 * @example
 * ```ts
 * const gauges = prepareQueueGauges(db);
 * gauges(); // { deliveries: [{ source: "stripe", target: "stripe:*", status: "pending", count: 3, … }], … }
 * ```
 */
export function prepareQueueGauges(db: Database.Database): () => QueueGauges {
  const deliveries = db.prepare<[], QueueGauges["deliveries"][number]>(deliveriesSql);
  const held = db.prepare<[], QueueGauges["heldEffects"][number]>(heldSql);
  return () => ({ deliveries: deliveries.all(), heldEffects: held.all() });
}
