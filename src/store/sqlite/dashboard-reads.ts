import type Database from "better-sqlite3";
import { receiptIdFloor } from "../alert-fold.ts";
import type { FailingDeliveries, ReceiptMinute } from "../dashboard-types.ts";

// Receipt ids are `rcp_<ulid>`: `id >= floor` is a range over the primary key that starts at the
// window, so the read costs the window's rows. `received_at >= ?` keeps the window exact.
const seriesSql = `
  SELECT (received_at / 60000) * 60000 AS minute, source,
         CASE WHEN event_id IS NULL THEN 'rejected' WHEN duplicate = 1 THEN 'duplicate' ELSE 'new' END AS kind,
         code, count(*) AS count
  FROM receipts
  WHERE id >= ? AND received_at >= ?
  GROUP BY 1, 2, 3, 4
  ORDER BY 1`;

// deliveries_status_id narrows to the pending rows; done rows are never read.
const failingSql = `
  SELECT e.source AS source, d.target AS target, count(*) AS count
  FROM deliveries d INDEXED BY deliveries_status_id JOIN events e ON e.id = d.event_id
  WHERE d.status = 'pending' AND d.attempts > 0
  GROUP BY e.source, d.target`;

/**
 * Prepares the dashboard overview's reads on SQLite: receipts per minute, source and kind since
 * a time, and deliveries waiting after a failed attempt.
 *
 * @example
 * ```ts
 * const reads = prepareDashboardReads(db);
 * reads.receiptSeries(Date.now() - 3_600_000); // [{ minute, source: "stripe", kind: "new", code: null, count: 4 }, …]
 * ```
 */
export function prepareDashboardReads(db: Database.Database) {
  const series = db.prepare<[string, number], ReceiptMinute>(seriesSql);
  const failing = db.prepare<[], FailingDeliveries>(failingSql);
  const byKey = db.prepare<[string, string], { id: string }>(
    "SELECT id FROM events WHERE source = ? AND dedup_key = ?",
  );
  return {
    eventIdsByDedupKey: (sources: readonly string[], dedupKey: string) =>
      sources
        .flatMap((source) => byKey.all(source, dedupKey).map((row) => row.id))
        .sort()
        .reverse(),
    receiptSeries: (since: number) => series.all(receiptIdFloor(since), Math.floor(since)),
    failingDeliveries: () => failing.all(),
  };
}
