import type { AlertOutboxStore, OutboxAlert } from "../alert-types.ts";
import type { QueueStore } from "../queue-types.ts";
import { inList, listValue } from "./sql-template.ts";
import { executeText, skipLockedSql, type WriteDriver } from "./write-driver.ts";

/** The alert writes core implements (drivers leave them out). */
export type CoreAlertWrites = "claimDueAlerts" | "pruneAlerts" | "settleAlert";

/**
 * The alert outbox's single-statement writes and the dead-letter alert mark, once for both
 * stores over a driver's `execute` primitive: claim the due alerts with a lease (oldest first;
 * PostgreSQL skips the rows another process is claiming), prune delivered ones, settle one
 * after its attempt, and confirm dead-letter alerts. Recording is a write program
 * (alert-record.ts): it folds under a per-condition lock inside the caller's own transaction.
 *
 * @example
 * ```ts
 * const writes = alertWrites(driver);
 * const due = await writes.claimDueAlerts(Date.now(), 10, 120_000);
 * ```
 */
export function alertWrites(
  driver: WriteDriver,
): Pick<AlertOutboxStore, CoreAlertWrites> & Pick<QueueStore, "markAlerted"> {
  const outbox = driver.table("alert_outbox");
  const one = async (text: string, params: unknown[]) => {
    const [result] = await executeText(driver, [[text, params]]);
    return result ?? { rows: [], rowCount: 0 };
  };
  return {
    async claimDueAlerts(now, limit, leaseMs) {
      const at = Math.floor(now);
      const { rows } = await one(
        `UPDATE ${outbox} SET due_at = ?
         WHERE id IN (SELECT id FROM ${outbox} WHERE delivered_at IS NULL AND due_at <= ?
                      ORDER BY due_at, id LIMIT ?${skipLockedSql(driver.dialect)})
         RETURNING id, condition, kind, payload, count, created_at AS "createdAt",
                   last_at AS "lastAt", attempts`,
        [at + Math.floor(leaseMs), at, limit],
      );
      return (rows as unknown as OutboxAlert[])
        .map((row) => ({
          ...row,
          count: Number(row.count),
          createdAt: Number(row.createdAt),
          lastAt: Number(row.lastAt),
          attempts: Number(row.attempts),
        }))
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
    },
    async pruneAlerts(before, limit) {
      const { rowCount } = await one(
        `DELETE FROM ${outbox} WHERE id IN (SELECT id FROM ${outbox}
           WHERE delivered_at IS NOT NULL AND delivered_at < ? LIMIT ?)`,
        [Math.floor(before), limit],
      );
      return rowCount;
    },
    async settleAlert(id, outcome) {
      await (outcome.delivered
        ? one(
            `UPDATE ${outbox} SET delivered_at = ?, attempts = attempts + 1, last_error = NULL WHERE id = ?`,
            [Math.floor(outcome.now), id],
          )
        : one(
            `UPDATE ${outbox} SET due_at = ?, attempts = attempts + 1, last_error = ? WHERE id = ?`,
            [Math.floor(outcome.retryAt), outcome.error, id],
          ));
    },
    async markAlerted(ids, now) {
      if (ids.length === 0) return;
      await one(
        `UPDATE ${driver.table("deliveries")} SET alerted_at = ?
         WHERE ${inList(driver.dialect, "id")} AND status = 'dead' AND alerted_at IS NULL`,
        [Math.floor(now), listValue(driver.dialect, ids)],
      );
    },
  };
}
