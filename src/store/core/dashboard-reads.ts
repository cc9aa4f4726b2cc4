import { receiptIdFloor } from "../alert-fold.ts";
import type { DashboardStore, FailingDeliveries, ReceiptMinute } from "../dashboard-types.ts";
import type { DestinationStore } from "../forward-types.ts";
import { fenceSql } from "./queue-rules.ts";
import { indexedBy, type ReadDriver, rowsOf } from "./read-driver.ts";
import { inList, listValue } from "./sql-template.ts";
import { type DestinationRow, destinationColumns, toDestinationState } from "./views.ts";

/** The dashboard and destination reads core implements (drivers leave them out). */
export type CoreDashboardReads = "receiptSeries" | "failingDeliveries";
/** The destination reads core implements (drivers leave them out). */
export type CoreDestinationReads = "listDestinationStates" | "countRunning";

/**
 * The dashboard overview's reads and the destinations' reads, once for both stores over a
 * driver's `rows` primitive: receipts per minute, source and kind since a time, deliveries
 * waiting after a failed attempt, the destinations' states and their running deliveries.
 *
 * @example
 * ```ts
 * const reads = dashboardReads(driver);
 * await reads.receiptSeries(Date.now() - 3_600_000); // [{ minute, source: "stripe", kind: "new", code: null, count: 4 }, …]
 * ```
 */
export function dashboardReads(
  driver: ReadDriver,
): Pick<DashboardStore, CoreDashboardReads> & Pick<DestinationStore, CoreDestinationReads> {
  const deliveries = driver.table("deliveries");
  return {
    async receiptSeries(since) {
      // Receipt ids are `rcp_<ulid>`: `id >= floor` is a range over the primary key that starts
      // at the window, so the read costs the window's rows. `received_at >= ?` keeps it exact.
      const rows = await rowsOf<ReceiptMinute>(
        driver,
        `SELECT (received_at / 60000) * 60000 AS minute, source,
                CASE WHEN event_id IS NULL THEN 'rejected' WHEN duplicate THEN 'duplicate' ELSE 'new' END AS kind,
                code, count(*) AS count
         FROM ${driver.table("receipts")} WHERE id >= ? AND received_at >= ?
         GROUP BY 1, 2, 3, 4 ORDER BY 1`,
        [receiptIdFloor(since), Math.floor(since)],
      );
      return rows.map((row) => ({ ...row, minute: Number(row.minute), count: Number(row.count) }));
    },
    async failingDeliveries() {
      // deliveries_status_id narrows to the pending rows; done rows are never read.
      const rows = await rowsOf<FailingDeliveries>(
        driver,
        `SELECT e.source AS source, d.target AS target, count(*) AS count
         FROM ${deliveries} d${indexedBy(driver.dialect, "deliveries_status_id")}
         JOIN ${driver.table("events")} e ON e.id = d.event_id
         WHERE d.status = 'pending' AND d.attempts > 0
         GROUP BY e.source, d.target`,
      );
      return rows.map((row) => ({ ...row, count: Number(row.count) }));
    },
    async listDestinationStates() {
      const rows = await rowsOf<DestinationRow>(
        driver,
        `SELECT ${destinationColumns} FROM ${driver.table("destinations")} ORDER BY name`,
      );
      return rows.map(toDestinationState);
    },
    async countRunning(targets) {
      const counts: Record<string, number> = {};
      if (targets.length === 0) return counts;
      // The running rows first (SQLite: by their partial index; PostgreSQL: behind OFFSET 0, an
      // index on status serves them), then their targets: with both conditions together
      // PostgreSQL may read every delivery of the target by deliveries_target_id instead, and
      // does when its statistics say the table is small.
      const rows = await rowsOf<{ target: string; n: number | string }>(
        driver,
        `SELECT r.target, count(*) AS n
         FROM (SELECT target FROM ${deliveries}${indexedBy(driver.dialect, "deliveries_running_lease")}
               WHERE status = 'running'${fenceSql(driver.dialect)}) r
         WHERE ${inList(driver.dialect, "r.target")} GROUP BY r.target`,
        [listValue(driver.dialect, targets)],
      );
      for (const row of rows) counts[row.target] = Number(row.n);
      return counts;
    },
  };
}
