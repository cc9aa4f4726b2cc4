import type Database from "better-sqlite3";
import type { StuckReport } from "../../queue-types.ts";
import { type DeliveryRow, deliveryColumns, toDeliveryView } from "./delivery-views.ts";
import { prepareEffects } from "./effects.ts";

const expiredSql = `
  SELECT ${deliveryColumns} FROM deliveries
  WHERE status = 'running' AND lease_expires_at < @now ORDER BY lease_expires_at LIMIT @limit`;

// Oldest first within each unfinished status (events_status_id); received_at is checked per row.
const oldSql = `
  SELECT id, source, type, status, received_at FROM events
  WHERE status = @status AND received_at < @before ORDER BY id LIMIT @limit`;

/**
 * Prepares `hookinbox stuck`: leases past expiry (a worker died and nothing rescued yet), effects
 * held for a human, and events older than a threshold that are still not done.
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
  return ({ now, olderThanMs, limit }) => {
    const before = Math.floor(now - olderThanMs);
    const oldUndone = ["pending", "dead"].flatMap((status) => old.all({ status, before, limit }));
    return {
      expiredLeases: expired.all({ now: Math.floor(now), limit }).map((row) => toDeliveryView(row)),
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
