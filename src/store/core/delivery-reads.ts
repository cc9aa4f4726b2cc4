import type { AttemptView, DeliveryView, QueueStore } from "../queue-types.ts";
import { deliveryCountQueries, toDeliveryCounts } from "./bulk-counts.ts";
import { deliveryTerms, renderWhere } from "./filters.ts";
import { pageLimit, pageOf } from "./paging.ts";
import { type ReadDriver, rowsOf } from "./read-driver.ts";
import { inList, listValue, placeholder } from "./sql-template.ts";
import {
  type AttemptRow,
  attemptColumns,
  type DeliveryRow,
  toAttemptView,
  toDeliveryView,
} from "./views.ts";

/** The delivery reads core implements (drivers leave them out). */
export type CoreDeliveryReads = "listDeliveries" | "deliveryById" | "countDeliveryKinds";

/**
 * The columns every delivery view selects, with the event's source and type beside each
 * delivery (a primary-key lookup per row, so runbooks and lists need no second round trip).
 * Written for `FROM <deliveries table>` without an alias; `events` is the events table.
 *
 * @example
 * ```ts
 * `SELECT ${deliveryColumnsSql("events")} FROM deliveries WHERE id = ?`;
 * ```
 */
export function deliveryColumnsSql(events: string): string {
  return `id, event_id, target, status, ordering_key, version, attempts, run_at,
  lease_owner, lease_expires_at, last_error, is_replay, replay_of, created_at, completed_at,
  (SELECT e.source FROM ${events} e WHERE e.id = deliveries.event_id) AS source,
  (SELECT e.type FROM ${events} e WHERE e.id = deliveries.event_id) AS type`;
}

/**
 * The delivery reads, once for both stores over a driver's `rows` primitive: the Store's listing,
 * one delivery and the bulk dry-run counts, and the views other reads build on (an event's
 * deliveries with their attempt logs, the expired and abandoned leases of `stuck`).
 *
 * @example
 * ```ts
 * const reads = deliveryReads(driver);
 * await reads.listDeliveries({ status: "dead", limit: 50 });
 * await reads.ofEvent("evt_…"); // with attempt logs
 * ```
 */
export function deliveryReads(driver: ReadDriver) {
  const deliveries = driver.table("deliveries");
  const columns = deliveryColumnsSql(driver.table("events"));
  const deliveryRows = (where: string, params: unknown[]) =>
    rowsOf<DeliveryRow>(driver, `SELECT ${columns} FROM ${deliveries} ${where}`, params);

  /** The attempt logs of `ids`, each in attempt order (one statement for all of them). */
  async function attemptLogs(ids: readonly string[]): Promise<Map<string, AttemptView[]>> {
    const logs = new Map<string, AttemptView[]>();
    if (ids.length === 0) return logs;
    const rows = await rowsOf<AttemptRow & { delivery_id: string }>(
      driver,
      `SELECT delivery_id, ${attemptColumns} FROM ${driver.table("attempts")}
       WHERE ${inList(driver.dialect, "delivery_id")} ORDER BY delivery_id, attempt`,
      [listValue(driver.dialect, ids)],
    );
    for (const row of rows) {
      const log = logs.get(row.delivery_id) ?? [];
      log.push(toAttemptView(row));
      logs.set(row.delivery_id, log);
    }
    return logs;
  }

  const withLogs = async (rows: DeliveryRow[]): Promise<DeliveryView[]> => {
    const logs = await attemptLogs(rows.map((row) => row.id));
    return rows.map((row) => toDeliveryView(row, logs.get(row.id) ?? []));
  };

  const reads: Pick<QueueStore, CoreDeliveryReads> = {
    async listDeliveries(query) {
      const limit = pageLimit(query.limit);
      const { where, values } = renderWhere(deliveryTerms(query), (n) =>
        placeholder(driver.dialect, n),
      );
      const rows = await driver.rows<DeliveryRow>({
        text: `SELECT ${columns} FROM ${deliveries} ${where} ORDER BY id DESC LIMIT ${placeholder(driver.dialect, values.length + 1)}`,
        params: [...values, limit + 1],
      });
      return pageOf(rows, limit, toDeliveryView);
    },
    async deliveryById(id) {
      const [row] = await withLogs(await deliveryRows("WHERE id = ?", [id]));
      return row ?? null;
    },
    async countDeliveryKinds(query) {
      const { kinds, events } = deliveryCountQueries(query, {
        dialect: driver.dialect,
        events: driver.table("events"),
        deliveries,
      });
      const [rows, total] = await Promise.all([
        driver.rows<Parameters<typeof toDeliveryCounts>[0][number]>({
          text: kinds.sql,
          params: kinds.values,
        }),
        driver.rows<{ n: number | string }>({ text: events.sql, params: events.values }),
      ]);
      return toDeliveryCounts(rows, total[0]?.n);
    },
  };
  return {
    ...reads,
    /** An event's deliveries in id order, each with its attempt log (event details). */
    ofEvent: async (eventId: string) =>
      withLogs(await deliveryRows("WHERE event_id = ? ORDER BY id", [eventId])),
    /** Running deliveries whose lease expired before `now`, oldest lease first. */
    expired: async (now: number, limit: number) =>
      (
        await deliveryRows(
          "WHERE status = 'running' AND lease_expires_at < ? ORDER BY lease_expires_at LIMIT ?",
          [Math.floor(now), limit],
        )
      ).map((row) => toDeliveryView(row)),
    /** Running deliveries whose current attempt was abandoned (markAbandoned wrote its error). */
    abandoned: async (limit: number) =>
      (
        await deliveryRows(
          `WHERE status = 'running' AND EXISTS (
             SELECT 1 FROM ${driver.table("attempts")} a
             WHERE a.delivery_id = deliveries.id AND a.attempt = deliveries.attempts
               AND a.outcome = 'running' AND a.error_message IS NOT NULL)
           ORDER BY id LIMIT ?`,
          [limit],
        )
      ).map((row) => toDeliveryView(row)),
  };
}
