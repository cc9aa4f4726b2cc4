import type pg from "pg";
import { type CountDialect, deliveryCountQueries, toDeliveryCounts } from "../core/bulk-counts.ts";
import { deliveryTerms, renderWhere } from "../core/filters.ts";
import { pageLimit, pageOf } from "../core/paging.ts";
import { attemptColumns, toAttemptView, toDeliveryView } from "../core/views.ts";
import type {
  AttemptView,
  DeliveryCountQuery,
  DeliveryCounts,
  DeliveryPage,
  DeliveryQuery,
  DeliveryView,
} from "../queue-types.ts";
import { withRetry } from "./connection.ts";
import { retryPostgres } from "./queue/retry-delivery.ts";
import type { SchemaNames } from "./schema-names.ts";

/** The columns every delivery view selects, with the event's source and type (for `FROM deliveries`). */
const columnsOf = (
  t: SchemaNames,
) => `id, event_id, target, status, ordering_key, version, attempts,
  run_at, lease_owner, lease_expires_at, last_error, is_replay, replay_of, created_at, completed_at,
  (SELECT e.source FROM ${t.events} e WHERE e.id = deliveries.event_id) AS source,
  (SELECT e.type FROM ${t.events} e WHERE e.id = deliveries.event_id) AS type`;

/**
 * Bulk counts in PostgreSQL: a list is one text[] parameter.
 *
 * @example
 * ```ts
 * deliveryCountQueries({ statuses: ["dead"] }, postgresCounts(t));
 * ```
 */
export function postgresCounts(t: SchemaNames): CountDialect {
  return {
    dialect: "postgres",
    events: t.events,
    deliveries: t.deliveries,
  };
}

async function attemptLogs(
  pool: pg.Pool,
  t: SchemaNames,
  ids: readonly string[],
): Promise<Map<string, AttemptView[]>> {
  const logs = new Map<string, AttemptView[]>();
  if (ids.length === 0) return logs;
  const { rows } = await withRetry(() =>
    pool.query(
      `SELECT delivery_id, ${attemptColumns}
       FROM ${t.attempts} WHERE delivery_id = ANY($1::text[]) ORDER BY delivery_id, attempt`,
      [ids],
    ),
  );
  for (const a of rows) {
    const list = logs.get(a.delivery_id) ?? [];
    list.push(toAttemptView(a));
    logs.set(a.delivery_id, list);
  }
  return logs;
}

/**
 * Delivery listings, and the operator's retry of a dead letter (queue/retry-delivery.ts).
 *
 * @example
 * ```ts
 * const views = deliveriesPostgres(pool, schemaNames("hookinbox"), notify);
 * await views.list({ status: "dead", limit: 50 });
 * ```
 */
export function deliveriesPostgres(pool: pg.Pool, t: SchemaNames, notify: () => Promise<void>) {
  const columns = columnsOf(t);
  const byId = async (id: string): Promise<DeliveryView | null> => {
    const { rows } = await withRetry(() =>
      pool.query(`SELECT ${columns} FROM ${t.deliveries} WHERE id = $1`, [id]),
    );
    if (!rows[0]) return null;
    return toDeliveryView(rows[0], (await attemptLogs(pool, t, [id])).get(id) ?? []);
  };
  return {
    byId,
    /** Deliveries per target and event kind, and their distinct events (bulk dry runs). */
    async counts(query: DeliveryCountQuery): Promise<DeliveryCounts> {
      const { kinds, events } = deliveryCountQueries(query, postgresCounts(t));
      const [rows, total] = await Promise.all([
        withRetry(() => pool.query(kinds.sql, kinds.values)),
        withRetry(() => pool.query(events.sql, events.values)),
      ]);
      return toDeliveryCounts(rows.rows, total.rows[0]?.n);
    },
    async list(query: DeliveryQuery): Promise<DeliveryPage> {
      const limit = pageLimit(query.limit);
      const { where, values } = renderWhere(deliveryTerms(query), (n) => `$${n}`);
      values.push(limit + 1);
      const { rows } = await withRetry(() =>
        pool.query(
          `SELECT ${columns} FROM ${t.deliveries} ${where} ORDER BY id DESC LIMIT $${values.length}`,
          values,
        ),
      );
      return pageOf(rows, limit, toDeliveryView);
    },
    async expired(now: number, limit: number): Promise<DeliveryView[]> {
      const { rows } = await withRetry(() =>
        pool.query(
          `SELECT ${columns} FROM ${t.deliveries} WHERE status = 'running' AND lease_expires_at < $1
           ORDER BY lease_expires_at LIMIT $2`,
          [Math.floor(now), limit],
        ),
      );
      return rows.map((row) => toDeliveryView(row));
    },
    async abandoned(limit: number): Promise<DeliveryView[]> {
      const { rows } = await withRetry(() =>
        pool.query(
          `SELECT ${columns} FROM ${t.deliveries} WHERE status = 'running' AND EXISTS (
             SELECT 1 FROM ${t.attempts} a
             WHERE a.delivery_id = deliveries.id AND a.attempt = deliveries.attempts
               AND a.outcome = 'running' AND a.error_message IS NOT NULL)
           ORDER BY id LIMIT $1`,
          [limit],
        ),
      );
      return rows.map((row) => toDeliveryView(row));
    },
    async ofEvent(eventId: string): Promise<DeliveryView[]> {
      const { rows } = await withRetry(() =>
        pool.query(`SELECT ${columns} FROM ${t.deliveries} WHERE event_id = $1 ORDER BY id`, [
          eventId,
        ]),
      );
      const logs = await attemptLogs(
        pool,
        t,
        rows.map((r) => r.id),
      );
      return rows.map((row) => toDeliveryView(row, logs.get(row.id) ?? []));
    },
    retry: (id: string, now: number) => retryPostgres(pool, t, id, now, notify, byId),
  };
}
