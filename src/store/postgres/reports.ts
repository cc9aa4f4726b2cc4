import type pg from "pg";
import type { DeadLetterAlert, QueueGauges, StuckReport } from "../queue-types.ts";
import { withRetry } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * The dead-letter alert outbox and the `stuck` report on PostgreSQL.
 *
 * @example
 * ```ts
 * const reports = reportsPostgres(pool, schemaNames("hookinbox"), views);
 * await reports.stuck({ now: Date.now(), olderThanMs: 3_600_000, limit: 50 });
 * ```
 */
export function reportsPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  views: {
    listExpired: (now: number, limit: number) => Promise<StuckReport["expiredLeases"]>;
    listAbandoned: (limit: number) => Promise<StuckReport["abandoned"]>;
    heldEffects: () => Promise<StuckReport["heldEffects"]>;
  },
) {
  return {
    async pendingDeadLetterAlerts(limit: number): Promise<DeadLetterAlert[]> {
      const { rows } = await withRetry(() =>
        pool.query(
          `SELECT d.id AS "deliveryId", d.event_id AS "eventId", d.target, e.source, e.type, d.attempts,
                  d.last_error AS "lastError", d.ordering_key AS "orderingKey", d.blocks_key AS "blocksKey",
                  CASE WHEN d.blocks_key THEN
                    (SELECT count(*)::int FROM ${t.deliveries} p
                     WHERE p.target = d.target AND p.ordering_key = d.ordering_key
                       AND p.status IN ('pending', 'blocked'))
                  ELSE 0 END AS parked
           FROM ${t.deliveries} d JOIN ${t.events} e ON e.id = d.event_id
           WHERE d.status = 'dead' AND d.alerted_at IS NULL ORDER BY d.id LIMIT $1`,
          [limit],
        ),
      );
      return rows;
    },
    async markAlerted(ids: readonly string[], now: number): Promise<void> {
      if (ids.length === 0) return;
      await withRetry(() =>
        pool.query(
          `UPDATE ${t.deliveries} SET alerted_at = $2 WHERE id = ANY($1::text[]) AND status = 'dead' AND alerted_at IS NULL`,
          [ids, Math.floor(now)],
        ),
      );
    },
    async queueGauges(): Promise<QueueGauges> {
      const [deliveries, held] = await Promise.all([
        withRetry(() =>
          pool.query(
            `SELECT e.source, d.target, d.status, count(*)::int AS count,
                    min(d.created_at)::float8 AS "oldestCreatedAt"
             FROM ${t.deliveries} d JOIN ${t.events} e ON e.id = d.event_id
             WHERE d.status IN ('pending', 'blocked', 'running', 'dead')
             GROUP BY e.source, d.target, d.status`,
          ),
        ),
        withRetry(() =>
          pool.query(
            `SELECT target, count(*)::int AS count FROM ${t.effects} WHERE status = 'held' GROUP BY target`,
          ),
        ),
      ]);
      return { deliveries: deliveries.rows, heldEffects: held.rows };
    },
    async stuck(input: { now: number; olderThanMs: number; limit: number }): Promise<StuckReport> {
      const before = Math.floor(input.now - input.olderThanMs);
      const { rows } = await withRetry(() =>
        pool.query(
          `(SELECT id, source, type, status, received_at FROM ${t.events} WHERE status = 'pending' AND received_at < $1 ORDER BY id LIMIT $2)
           UNION ALL
           (SELECT id, source, type, status, received_at FROM ${t.events} WHERE status = 'dead' AND received_at < $1 ORDER BY id LIMIT $2)`,
          [before, input.limit],
        ),
      );
      return {
        expiredLeases: await views.listExpired(input.now, input.limit),
        abandoned: await views.listAbandoned(input.limit),
        blockedKeys: (
          await withRetry(() =>
            pool.query(
              `SELECT * FROM (
                 SELECT d.id AS "deliveryId", d.event_id AS "eventId", d.target, e.source, e.type,
                        d.ordering_key AS "orderingKey", d.last_error AS "lastError",
                        (SELECT count(*)::int FROM ${t.deliveries} p
                         WHERE p.target = d.target AND p.ordering_key = d.ordering_key
                           AND p.status IN ('pending', 'blocked')) AS parked
                 FROM ${t.deliveries} d JOIN ${t.events} e ON e.id = d.event_id
                 WHERE d.status = 'dead' AND d.blocks_key AND d.ordering_key IS NOT NULL) k
               WHERE parked > 0 ORDER BY "deliveryId" LIMIT $1`,
              [input.limit],
            ),
          )
        ).rows,
        heldEffects: (await views.heldEffects()).slice(0, input.limit),
        oldUndone: rows.slice(0, input.limit).map((e) => ({
          id: e.id,
          source: e.source,
          type: e.type,
          status: e.status,
          receivedAt: new Date(e.received_at).toISOString(),
        })),
      };
    },
  };
}
