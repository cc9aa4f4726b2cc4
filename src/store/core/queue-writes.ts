import type { AuditStore } from "../audit-types.ts";
import type { QueueStore } from "../queue-types.ts";
import type { Store } from "../types.ts";
import { indexedBy } from "./read-driver.ts";
import { inList, listValue, type SqlDialect } from "./sql-template.ts";
import { executeText, type WriteDriver } from "./write-driver.ts";

/** The queue, effect, audit and rejection writes core implements (drivers leave them out). */
export type CoreQueueWrites =
  | "pruneRejections"
  | "extendLeases"
  | "markAbandoned"
  | "completeEffect"
  | "releaseEffect"
  | "saveTreeHead";

/** A JSON text parameter as the column stores it: jsonb on PostgreSQL, text on SQLite. */
const jsonParam = (dialect: SqlDialect) => (dialect === "postgres" ? "?::jsonb" : "?");

/**
 * The lease, effect-ledger and tree-head writes that are one rule each, once for both stores
 * over a driver's `execute` primitive: a heartbeat extends only the leases its worker still
 * holds; an abandoned handler's error is written on its delivery and running attempt only while
 * the worker holds the lease; an effect is completed or released only by its claimant while it
 * is processing; a signed tree head is stored once; rejected receipts are pruned oldest first,
 * never an accepted one.
 *
 * @example
 * ```ts
 * const writes = queueWrites(driver);
 * await writes.extendLeases("wrk_1", ["dlv_…"], Date.now() + 30_000); // ["dlv_…"]
 * ```
 */
export function queueWrites(
  driver: WriteDriver,
): Pick<QueueStore, Exclude<CoreQueueWrites, "saveTreeHead" | "pruneRejections">> &
  Pick<AuditStore, "saveTreeHead"> &
  Pick<Store, "pruneRejections"> {
  const deliveries = driver.table("deliveries");
  const effects = driver.table("effects");
  // Rejections are receipts without an event: PostgreSQL keeps them in a partition of their own,
  // SQLite in the receipts table behind the partial receipts_rejected index.
  const rejected =
    driver.dialect === "postgres" ? driver.table("receipts_rejected") : driver.table("receipts");
  return {
    async pruneRejections(before, limit) {
      const [result] = await executeText(driver, [
        [
          `DELETE FROM ${rejected} WHERE id IN (
             SELECT id FROM ${rejected}${indexedBy(driver.dialect, "receipts_rejected")}
             WHERE event_id IS NULL AND received_at < ? ORDER BY id LIMIT ?)`,
          [Math.floor(before), limit],
        ],
      ]);
      return result?.rowCount ?? 0;
    },
    async extendLeases(workerId, ids, until) {
      if (ids.length === 0) return [];
      const [result] = await executeText(driver, [
        [
          `UPDATE ${deliveries} SET lease_expires_at = ?
           WHERE ${inList(driver.dialect, "id")} AND status = 'running' AND lease_owner = ?
           RETURNING id`,
          [Math.floor(until), listValue(driver.dialect, ids), workerId],
        ],
      ]);
      return (result?.rows ?? []).map((row) => String(row.id));
    },
    async markAbandoned(input) {
      const held = `id = ? AND status = 'running' AND lease_owner = ?`;
      await executeText(driver, [
        [
          `UPDATE ${deliveries} SET last_error = ?, updated_at = ? WHERE ${held}`,
          [input.error, Math.floor(input.now), input.deliveryId, input.workerId],
        ],
        [
          `UPDATE ${driver.table("attempts")} SET error_message = ?
           WHERE delivery_id = ? AND attempt = ? AND outcome = 'running'
             AND EXISTS (SELECT 1 FROM ${deliveries} WHERE ${held})`,
          [input.error, input.deliveryId, input.attempt, input.deliveryId, input.workerId],
        ],
      ]);
    },
    async completeEffect(effectId, claimant, result, now) {
      await executeText(driver, [
        [
          `UPDATE ${effects} SET status = 'done', result = ${jsonParam(driver.dialect)},
             completed_at = ?, claimant = NULL
           WHERE id = ? AND claimant = ? AND status = 'processing'`,
          [
            result === undefined ? null : JSON.stringify(result),
            Math.floor(now),
            effectId,
            claimant,
          ],
        ],
      ]);
    },
    async releaseEffect(effectId, claimant) {
      await executeText(driver, [
        [
          `DELETE FROM ${effects} WHERE id = ? AND claimant = ? AND status = 'processing'`,
          [effectId, claimant],
        ],
      ]);
    },
    async saveTreeHead(head) {
      await executeText(driver, [
        [
          `INSERT INTO ${driver.table("audit_heads")} (size, root, signed_at, public_key, signature)
           VALUES (?, ?, ?, ?, ?) ON CONFLICT (size, signed_at) DO NOTHING`,
          [head.size, head.root, head.signedAt, head.publicKey, head.signature],
        ],
      ]);
    },
  };
}
