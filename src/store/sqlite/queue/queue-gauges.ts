import type Database from "better-sqlite3";
import type { QueueGauges } from "../../queue-types.ts";

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
