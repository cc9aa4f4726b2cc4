import type pg from "pg";
import { receiptIdFloor } from "../alert-fold.ts";
import type { DashboardStore, FailingDeliveries, ReceiptMinute } from "../dashboard-types.ts";
import { withRetry } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * The dashboard overview's reads on PostgreSQL: receipts per minute, source and kind since a
 * time (a range over the time-ordered primary key), and deliveries waiting after a failed attempt.
 *
 * @example
 * ```ts
 * const reads = dashboardReadsPostgres(pool, schemaNames("hookinbox"));
 * await reads.receiptSeries(Date.now() - 3_600_000);
 * ```
 */
export function dashboardReadsPostgres(pool: pg.Pool, t: SchemaNames): DashboardStore {
  return {
    async receiptSeries(since) {
      const { rows } = await withRetry(() =>
        pool.query<ReceiptMinute>(
          `SELECT ((received_at / 60000) * 60000)::float8 AS minute, source,
                  CASE WHEN event_id IS NULL THEN 'rejected' WHEN duplicate THEN 'duplicate' ELSE 'new' END AS kind,
                  code, count(*)::int AS count
           FROM ${t.receipts} WHERE id >= $1 AND received_at >= $2
           GROUP BY 1, 2, 3, 4 ORDER BY 1`,
          [receiptIdFloor(since), Math.floor(since)],
        ),
      );
      return rows;
    },
    async eventIdsByDedupKey(sources, dedupKey) {
      if (sources.length === 0) return [];
      const { rows } = await withRetry(() =>
        pool.query<{ id: string }>(
          // event_dedup, not events: events is partitioned by day and keeps no (source,
          // dedup_key) index; the keys are kept for retention.dedup.
          `SELECT event_id AS id FROM ${t.event_dedup} WHERE source = ANY($1::text[]) AND dedup_key = $2 ORDER BY event_id DESC`,
          [sources, dedupKey],
        ),
      );
      return rows.map((row) => row.id);
    },
    async failingDeliveries() {
      const { rows } = await withRetry(() =>
        pool.query<FailingDeliveries>(
          `SELECT e.source, d.target, count(*)::int AS count
           FROM ${t.deliveries} d JOIN ${t.events} e ON e.id = d.event_id
           WHERE d.status = 'pending' AND d.attempts > 0
           GROUP BY e.source, d.target`,
        ),
      );
      return rows;
    },
  };
}
