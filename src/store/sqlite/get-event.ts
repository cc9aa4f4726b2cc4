import type Database from "better-sqlite3";
import {
  type EventDetailRow,
  type EventReceiptRow,
  eventDetailColumns,
  eventReceiptColumns,
  toEventDetail,
} from "../core/event-views.ts";
import type { EventDetail } from "../types.ts";

const eventSql = `SELECT ${eventDetailColumns} FROM events WHERE id = ?`;

// Rejections have no event_id, so they never appear here. Served by the partial
// receipts (event_id, received_at, id) index, already in order.
const receiptsSql = `
  SELECT ${eventReceiptColumns} FROM receipts WHERE event_id = ?
  ORDER BY received_at, id`;

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
