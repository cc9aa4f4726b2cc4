import type {
  BlockedKey,
  DeadLetterAlert,
  DeliveryView,
  QueueGauges,
  QueueStore,
} from "../queue-types.ts";
import type { EffectRow } from "./effect-claim.ts";
import { toEffectView } from "./effect-claim.ts";
import { effectsListingSql } from "./effects.ts";
import { isTrueSql } from "./queue-rules.ts";
import { indexedBy, type ReadDriver, rowsOf } from "./read-driver.ts";

/** The reports core implements (drivers leave them out). */
export type CoreReportReads = "listEffects" | "pendingDeadLetterAlerts" | "stuck" | "queueGauges";

/** Deliveries of the same target and key as `d` waiting behind it (pending or blocked). */
const parkedSql = (deliveries: string) => `(SELECT count(*) FROM ${deliveries} p
   WHERE p.target = d.target AND p.ordering_key = d.ordering_key
     AND p.status IN ('pending', 'blocked'))`;

/**
 * The operator's reports, once for both stores over a driver's `rows` primitive: the effects
 * listing, dead letters whose alert is unconfirmed, `hookinbox stuck` (expired leases, abandoned
 * handlers, keys parked behind a dead delivery, held effects, old unfinished events) and the
 * queue gauges `/metrics` reads at scrape time. `views` are the delivery views of
 * core/delivery-reads.ts.
 *
 * @example
 * ```ts
 * const reports = reportReads(driver, deliveryReads(driver));
 * await reports.stuck({ now: Date.now(), olderThanMs: 3_600_000, limit: 50 });
 * ```
 */
export function reportReads(
  driver: ReadDriver,
  views: {
    expired(now: number, limit: number): Promise<DeliveryView[]>;
    abandoned(limit: number): Promise<DeliveryView[]>;
  },
): Pick<QueueStore, CoreReportReads> {
  const deliveries = driver.table("deliveries");
  const events = driver.table("events");
  const blocks = isTrueSql(driver.dialect, "d.blocks_key");
  const listEffects: QueueStore["listEffects"] = async (query) =>
    (
      await driver.rows<EffectRow>(
        effectsListingSql(driver.dialect, driver.table("effects"), query),
      )
    ).map(toEffectView);
  return {
    listEffects,
    async pendingDeadLetterAlerts(limit) {
      const rows = await rowsOf<Omit<DeadLetterAlert, "blocksKey"> & { blocksKey: unknown }>(
        driver,
        `SELECT d.id AS "deliveryId", d.event_id AS "eventId", d.target, e.source, e.type, d.attempts,
                d.last_error AS "lastError", d.ordering_key AS "orderingKey", d.blocks_key AS "blocksKey",
                CASE WHEN ${blocks} THEN ${parkedSql(deliveries)} ELSE 0 END AS parked
         FROM ${deliveries} d JOIN ${events} e ON e.id = d.event_id
         WHERE d.status = 'dead' AND d.alerted_at IS NULL ORDER BY d.id LIMIT ?`,
        [limit],
      );
      return rows.map((row) => ({
        ...row,
        parked: Number(row.parked),
        blocksKey: row.blocksKey === true || row.blocksKey === 1,
      }));
    },
    async stuck({ now, olderThanMs, limit }) {
      const before = Math.floor(now - olderThanMs);
      // Oldest first within each unfinished status (events_status_id); received_at per row.
      const old = await Promise.all(
        ["pending", "dead"].map((status) =>
          rowsOf<{
            id: string;
            source: string;
            type: string | null;
            status: string;
            received_at: number;
          }>(
            driver,
            `SELECT id, source, type, status, received_at FROM ${events}
             WHERE status = ? AND received_at < ? ORDER BY id LIMIT ?`,
            [status, before, limit],
          ),
        ),
      );
      // Only keys with something parked: a blocking dead letter with nothing behind it stalls
      // nothing yet.
      const blockedKeys = await rowsOf<BlockedKey>(
        driver,
        `SELECT * FROM (
           SELECT d.id AS "deliveryId", d.event_id AS "eventId", d.target, e.source, e.type,
                  d.ordering_key AS "orderingKey", d.last_error AS "lastError",
                  ${parkedSql(deliveries)} AS parked
           FROM ${deliveries} d JOIN ${events} e ON e.id = d.event_id
           WHERE d.status = 'dead' AND ${blocks} AND d.ordering_key IS NOT NULL) k
         WHERE parked > 0 ORDER BY "deliveryId" LIMIT ?`,
        [limit],
      );
      return {
        expiredLeases: await views.expired(now, limit),
        abandoned: await views.abandoned(limit),
        blockedKeys: blockedKeys.map((key) => ({ ...key, parked: Number(key.parked) })),
        heldEffects: (await listEffects({ status: "held" })).slice(0, limit),
        oldUndone: old
          .flat()
          .slice(0, limit)
          .map((e) => ({
            id: e.id,
            source: e.source,
            type: e.type,
            status: e.status,
            receivedAt: new Date(Number(e.received_at)).toISOString(),
          })),
      };
    },
    async queueGauges(): Promise<QueueGauges> {
      // deliveries_status_id narrows to the unfinished and dead rows; done rows are never read.
      const [byStatus, held] = await Promise.all([
        rowsOf<QueueGauges["deliveries"][number]>(
          driver,
          `SELECT e.source AS source, d.target AS target, d.status AS status, count(*) AS count,
                  min(d.created_at) AS "oldestCreatedAt"
           FROM ${deliveries} d${indexedBy(driver.dialect, "deliveries_status_id")} JOIN ${events} e ON e.id = d.event_id
           WHERE d.status IN ('pending', 'blocked', 'running', 'dead')
           GROUP BY e.source, d.target, d.status`,
        ),
        rowsOf<QueueGauges["heldEffects"][number]>(
          driver,
          `SELECT target, count(*) AS count FROM ${driver.table("effects")} WHERE status = 'held' GROUP BY target`,
        ),
      ]);
      return {
        deliveries: byStatus.map((row) => ({
          ...row,
          count: Number(row.count),
          oldestCreatedAt: Number(row.oldestCreatedAt),
        })),
        heldEffects: held.map((row) => ({ ...row, count: Number(row.count) })),
      };
    },
  };
}
