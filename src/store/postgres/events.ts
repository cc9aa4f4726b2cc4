import type pg from "pg";
import {
  type EventSummaryRow,
  eventDetailSql,
  eventReceiptsSql,
  toEventDetail,
  toEventSummary,
} from "../core/event-views.ts";
import { beforeCursor, eventFilterTerms, renderWhere } from "../core/filters.ts";
import { pageLimit, pageOf } from "../core/paging.ts";
import type { DeliveryView } from "../queue-types.ts";
import type { EventDetail, EventPage, EventQuery } from "../types.ts";
import { withRetry } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * Newest-first event pages with optional source/type/status filters and an opaque cursor; never
 * more than `limit` rows (one more is read to know whether a next page exists).
 *
 * @example
 * ```ts
 * const page = await listEventsPostgres(pool, schemaNames("hookinbox"), { source: "stripe", limit: 50 });
 * ```
 */
export async function listEventsPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  query: EventQuery,
): Promise<EventPage> {
  const limit = pageLimit(query.limit);
  const { where, values } = renderWhere(
    [...eventFilterTerms(query), ...beforeCursor(query.cursor)],
    (n) => `$${n}`,
  );
  values.push(limit + 1);
  const sql = `
    SELECT e.id, e.source, e.dedup_key, e.type, e.status, e.received_at,
           (SELECT count(*) FROM ${t.receipts} r WHERE r.event_id = e.id)::int AS receipt_count
    FROM (SELECT id, source, dedup_key, type, status, received_at FROM ${t.events}
          ${where} ORDER BY id DESC LIMIT $${values.length}) e
    ORDER BY e.id DESC`;
  const { rows } = await withRetry(() => pool.query<EventSummaryRow>(sql, values));
  return pageOf(rows, limit, toEventSummary);
}

/**
 * One event with its raw body, headers as received, receipts, and deliveries with attempt logs.
 *
 * @example
 * ```ts
 * const event = await getEventPostgres(pool, schemaNames("hookinbox"), "evt_…", deliveriesOf);
 * ```
 */
export async function getEventPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  id: string,
  deliveriesOf: (eventId: string) => Promise<DeliveryView[]>,
): Promise<EventDetail | null> {
  const { rows } = await withRetry(() => pool.query(eventDetailSql(t.events, "$1"), [id]));
  const row = rows[0];
  if (!row) return null;
  const receipts = await withRetry(() => pool.query(eventReceiptsSql(t.receipts, "$1"), [id]));
  return { ...toEventDetail(row, receipts.rows), deliveries: await deliveriesOf(id) };
}
