import type { DeliveryView, QueueStore } from "../queue-types.ts";
import type { EventQuery, Store } from "../types.ts";
import { eventKindsQuery, toEventKinds } from "./bulk-counts.ts";
import {
  type EventDetailRow,
  type EventReceiptRow,
  type EventSummaryRow,
  eventDetailSql,
  eventReceiptsSql,
  type ReceiptRow,
  toEventDetail,
  toEventSummary,
  toReceiptRecord,
} from "./event-views.ts";
import {
  beforeCursor,
  eventFilterTerms,
  receiptTerms,
  renderWhere,
  replayTerms,
} from "./filters.ts";
import { pageLimit, pageOf } from "./paging.ts";
import type { ReadDriver } from "./read-driver.ts";
import { placeholder, type SqlDialect, type SqlStatement } from "./sql-template.ts";

/** The event and receipt reads core implements (drivers leave them out). */
export type CoreEventReads =
  | "listEvents"
  | "getEvent"
  | "listReceipts"
  | "countEvents"
  | "countEventKinds";

/**
 * One page of `listEvents` (newest first, `limit + 1` rows so `pageOf` knows whether a next page
 * exists), with `receipt_count` counted over the receipts (event_id, …) index for the page's rows
 * only. On SQLite, equality on the leading columns of one of the `events_*_id` indexes and
 * `id < ?` make it a backwards walk of that index that stops after the page (no sort). PostgreSQL
 * limits in a subquery first, so that the counts never run for rows a sort would drop.
 *
 * @example
 * ```ts
 * listEventsSql("sqlite", { events: "events", receipts: "receipts" }, { source: "stripe" }, 50);
 * // { text: "SELECT … WHERE source = ? … LIMIT ?", params: ["stripe", 51] }
 * ```
 */
export function listEventsSql(
  dialect: SqlDialect,
  tables: { readonly events: string; readonly receipts: string },
  query: EventQuery,
  limit: number,
): SqlStatement {
  const { where, values } = renderWhere(
    [...eventFilterTerms(query), ...beforeCursor(query.cursor)],
    (n) => placeholder(dialect, n),
  );
  const limitParam = placeholder(dialect, values.length + 1);
  const count = `(SELECT count(*) FROM ${tables.receipts} r WHERE r.event_id = e.id) AS receipt_count`;
  const text =
    dialect === "sqlite"
      ? `SELECT e.id, e.source, e.dedup_key, e.type, e.status, e.received_at, ${count}
         FROM ${tables.events} e ${where} ORDER BY e.id DESC LIMIT ${limitParam}`
      : `SELECT e.id, e.source, e.dedup_key, e.type, e.status, e.received_at, ${count}
         FROM (SELECT id, source, dedup_key, type, status, received_at FROM ${tables.events}
               ${where} ORDER BY id DESC LIMIT ${limitParam}) e
         ORDER BY e.id DESC`;
  return { text, params: [...values, limit + 1] };
}

/**
 * The event reads, once for both stores over a driver's `rows` primitive: newest-first event
 * pages, one event with its body, headers, receipts and deliveries (`ofEvent`, with attempt
 * logs: core/delivery-reads.ts), newest-first receipt pages, and the events a bulk replay's
 * filter matches (their number, and their count per source and type for a dry run).
 *
 * @example
 * ```ts
 * const reads = eventReads(driver, deliveryReads(driver).ofEvent);
 * await reads.listEvents({ source: "stripe", limit: 50 });
 * ```
 */
export function eventReads(
  driver: ReadDriver,
  ofEvent: (eventId: string) => Promise<DeliveryView[]>,
): Pick<Store & QueueStore, CoreEventReads> {
  const events = driver.table("events");
  const receipts = driver.table("receipts");
  const first = placeholder(driver.dialect, 1);
  return {
    async listEvents(query) {
      const limit = pageLimit(query.limit);
      const rows = await driver.rows<EventSummaryRow>(
        listEventsSql(driver.dialect, { events, receipts }, query, limit),
      );
      return pageOf(rows, limit, (row) =>
        toEventSummary({ ...row, receipt_count: Number(row.receipt_count) }),
      );
    },
    async getEvent(id) {
      const [row] = await driver.rows<EventDetailRow>({
        text: eventDetailSql(events, first),
        params: [id],
      });
      if (!row) return null;
      const receiptRows = await driver.rows<EventReceiptRow>({
        text: eventReceiptsSql(receipts, first),
        params: [id],
      });
      return { ...toEventDetail(row, receiptRows), deliveries: await ofEvent(id) };
    },
    async listReceipts(query) {
      const limit = pageLimit(query.limit);
      const { where, values } = renderWhere(receiptTerms(query), (n) =>
        placeholder(driver.dialect, n),
      );
      const rows = await driver.rows<ReceiptRow>({
        text: `SELECT id, source, received_at, event_id, duplicate, remote_address, status, code, size, header_names
               FROM ${receipts} ${where} ORDER BY id DESC LIMIT ${placeholder(driver.dialect, values.length + 1)}`,
        params: [...values, limit + 1],
      });
      return pageOf(rows, limit, toReceiptRecord);
    },
    async countEvents(filter) {
      const { where, values } = renderWhere(replayTerms(filter), (n) =>
        placeholder(driver.dialect, n),
      );
      const [row] = await driver.rows<{ n: number | string }>({
        text: `SELECT count(*) AS n FROM ${events} ${where}`,
        params: values,
      });
      return Number(row?.n ?? 0);
    },
    async countEventKinds(filter) {
      const { sql, values } = eventKindsQuery(filter, {
        dialect: driver.dialect,
        events,
        deliveries: driver.table("deliveries"),
      });
      return toEventKinds(
        await driver.rows<Parameters<typeof toEventKinds>[0][number]>({
          text: sql,
          params: values,
        }),
      );
    },
  };
}
