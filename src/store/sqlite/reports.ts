import type Database from "better-sqlite3";
import type { BlockedKey, StuckReport } from "../queue-types.ts";
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
