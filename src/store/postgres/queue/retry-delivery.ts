import type pg from "pg";
import { inKeyQueueSql } from "../../core/queue-rules.ts";
import { retryFallback } from "../../core/retry.ts";
import type { DeliveryView } from "../../queue-types.ts";
import { withRetry } from "../connection.ts";
import type { SchemaNames } from "../schema-names.ts";
import { refreshEventsSql } from "./refresh-event.ts";

/**
 * The operator's "run now" (`POST /api/deliveries/:id/retry`, `hookinbox retry`): a dead
 * delivery is retried with a fresh attempt budget, a pending one is due now, and a blocked one
 * runs its key's head now (order holds). Unknown id → null; any other status throws
 * HOOKINBOX_DELIVERY_NOT_RETRYABLE.
 *
 * @example
 * ```ts
 * const view = await retryPostgres(pool, schemaNames("hookinbox"), id, Date.now(), notify, byId);
 * ```
 */
export async function retryPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  id: string,
  now: number,
  notify: () => Promise<void>,
  byId: (id: string) => Promise<DeliveryView | null>,
): Promise<DeliveryView | null> {
  // "Run now": dead → pending with a fresh budget; pending → due now (same budget).
  const runNow = async (deliveryId: string) => {
    const { rows } = await withRetry(() =>
      pool.query(
        `WITH retried AS (
           UPDATE ${t.deliveries} SET status = 'pending', run_at = $2, blocks_key = false,
                  budget_base = CASE status WHEN 'dead' THEN attempts ELSE budget_base END,
                  alerted_at = CASE status WHEN 'dead' THEN NULL ELSE alerted_at END,
                  completed_at = NULL, updated_at = $2
           WHERE id = $1 AND status IN ('dead', 'pending') RETURNING event_id
         )
         SELECT (SELECT event_id FROM retried) AS event_id, (SELECT status FROM ${t.deliveries} WHERE id = $1) AS status`,
        [deliveryId, Math.floor(now)],
      ),
    );
    const row = rows[0];
    if (row?.event_id) {
      await withRetry(() => pool.query(refreshEventsSql(t, "ARRAY[$1::text]"), [row.event_id]));
      await notify();
    }
    return row as { event_id: string | null; status: string | null } | undefined;
  };
  const row = await runNow(id);
  if (row?.event_id) return byId(id);
  if (retryFallback(row?.status) === "none") return null;
  // A blocked delivery waits for the head of its key: run that head now, keeping order.
  const { rows: heads } = await withRetry(() =>
    pool.query(
      `SELECT h.id FROM ${t.deliveries} d JOIN ${t.deliveries} h
         ON h.target = d.target AND h.ordering_key = d.ordering_key
        AND ${inKeyQueueSql("postgres", "h")}
       WHERE d.id = $1 AND d.status = 'blocked'
       ORDER BY h.order_version, h.id LIMIT 1`,
      [id],
    ),
  );
  const head = heads[0] as { id: string } | undefined;
  if (head && head.id !== id) await runNow(head.id);
  return byId(id);
}
