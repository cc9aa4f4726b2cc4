import type Database from "better-sqlite3";
import type { EventDetailRow, EventReceiptRow, EventSummaryRow } from "../core/event-views.ts";
import {
  eventDetailSql,
  eventReceiptsSql,
  toEventDetail,
  toEventSummary,
} from "../core/event-views.ts";
import { beforeCursor, eventFilterTerms, renderWhere } from "../core/filters.ts";
import { encodeCursor, pageLimit } from "../core/paging.ts";
import type { EventDetail, EventPage, EventQuery } from "../types.ts";

/**
 * The SQL of one page and its values: newest first by id, with `receiptCount` as a correlated
 * count over the receipts (event_id, …) index, evaluated only for the rows of the page. With
 * equality on the leading columns of one of the `events_*_id` indexes and `id < ?`, SQLite walks
 * that index backwards and stops after `limit` rows.
 *
 * @example
 * ```ts
 * listEventsSql({ source: "stripe" }, 50); // { sql: "SELECT … WHERE source = ? … LIMIT ?", values: ["stripe", 50] }
 * ```
 */
export function listEventsSql(
  query: EventQuery,
  limit: number,
): { sql: string; values: unknown[] } {
  const { where, values } = renderWhere(
    [...eventFilterTerms(query), ...beforeCursor(query.cursor)],
    () => "?",
  );
  const sql = `
    SELECT e.id, e.source, e.dedup_key, e.type, e.status, e.received_at,
           (SELECT count(*) FROM receipts r WHERE r.event_id = e.id) AS receipt_count
    FROM events e
    ${where}
    ORDER BY e.id DESC
    LIMIT ?`;
  return { sql, values: [...values, limit] };
}

/**
 * Prepares `listEvents`: statements are created once per combination of filters (at most 16) and
 * reused. A page loads at most `limit` rows; `nextCursor` is null exactly when no row follows
 * (checked with a one-row probe on the same index, so the last page is never an empty one).
 *
 * @example
 * ```ts
 * const listEvents = prepareListEvents(db);
 * const page = listEvents({ source: "stripe", limit: 50 });
 * const next = page.nextCursor ? listEvents({ source: "stripe", cursor: page.nextCursor }) : null;
 * ```
 */
export function prepareListEvents(db: Database.Database): (query: EventQuery) => EventPage {
  const statements = new Map<string, Database.Statement<unknown[], EventSummaryRow>>();
  const prepared = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };

  return (query) => {
    const limit = pageLimit(query.limit);
    const { sql, values } = listEventsSql(query, limit);
    const rows = prepared(sql).all(...values);

    let nextCursor: string | null = null;
    const last = rows.at(-1);
    if (rows.length === limit && last) {
      // Is there at least one row after the last? Same index, stops at the first row.
      const probe = renderWhere(
        [...eventFilterTerms(query), { sql: "id < ?", values: [last.id] }],
        () => "?",
      );
      const more = prepared(`SELECT 1 FROM events e ${probe.where} ORDER BY e.id DESC LIMIT 1`);
      if (more.get(...probe.values) !== undefined) nextCursor = encodeCursor(last.id);
    }
    return { items: rows.map(toEventSummary), nextCursor };
  };
}

const eventSql = eventDetailSql("events", "?");

// Served by the partial receipts (event_id, received_at, id) index, already in order.
const receiptsSql = eventReceiptsSql("receipts", "?");

/**
 * Prepares `getEvent`: one event with its raw body (a plain Uint8Array copy), headers in arrival
 * order with names as sent, and its receipts ordered by received time. Unknown id → null.
 *
 * @example
 * ```ts
 * const getEvent = prepareGetEvent(db);
 * const event = getEvent("evt_01JD7Q5Z8X9K3M4N5P6R7S8T9V");
 * if (event) console.log(new TextDecoder().decode(event.body), event.receipts.length);
 * ```
 */
export function prepareGetEvent(
  db: Database.Database,
): (id: string) => Omit<EventDetail, "deliveries"> | null {
  const event = db.prepare<[string], EventDetailRow>(eventSql);
  const receipts = db.prepare<[string], EventReceiptRow>(receiptsSql);

  return (id) => {
    const row = event.get(id);
    return row ? toEventDetail(row, receipts.all(id)) : null;
  };
}
