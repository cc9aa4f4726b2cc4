import type { EventDetail, EventSummary, ReceiptRecord, ReceiptView } from "../types.ts";
import { isoTime } from "./views.ts";

/** An events row as both drivers select it for a listing. */
export interface EventSummaryRow {
  id: string;
  source: string;
  dedup_key: string;
  type: string | null;
  status: string;
  received_at: number;
  receipt_count: number;
}

/**
 * Maps a listing row to its summary.
 *
 * @example
 * ```ts
 * const items = rows.map(toEventSummary);
 * ```
 */
export function toEventSummary(row: EventSummaryRow): EventSummary {
  return {
    id: row.id,
    source: row.source,
    dedupKey: row.dedup_key,
    type: row.type,
    status: row.status,
    receivedAt: isoTime(row.received_at),
    receiptCount: row.receipt_count,
  };
}

/** The event columns `toEventDetail` reads. */
const eventDetailColumns = `id, source, dedup_key, type, occurred_at, ordering_key, version,
  status, received_at, body, headers, purged_at`;

/**
 * The one-event read of `getEvent`, over the driver's events table and id placeholder.
 *
 * @example
 * ```ts
 * eventDetailSql("events", "?"); // "SELECT id, source, … FROM events WHERE id = ?"
 * ```
 */
export function eventDetailSql(events: string, id: string): string {
  return `SELECT ${eventDetailColumns} FROM ${events} WHERE id = ${id}`;
}

/** An events row as both drivers select it for details (headers as JSON text or parsed). */
export interface EventDetailRow {
  id: string;
  source: string;
  dedup_key: string;
  type: string | null;
  occurred_at: number | null;
  ordering_key: string | null;
  version: number | null;
  status: string;
  received_at: number;
  body: Uint8Array;
  headers: string | Array<[string, string]>;
  purged_at: number | null;
}

/**
 * An event's receipts, oldest first (rejections have no event_id, so they never appear), over
 * the driver's receipts table and event id placeholder.
 *
 * @example
 * ```ts
 * eventReceiptsSql('"hookinbox".receipts', "$1"); // "SELECT id, received_at, … ORDER BY received_at, id"
 * ```
 */
export function eventReceiptsSql(receipts: string, eventId: string): string {
  return `SELECT id, received_at, duplicate, remote_address, secret_index FROM ${receipts}
    WHERE event_id = ${eventId} ORDER BY received_at, id`;
}

/** A receipt row of an event's timeline. */
export interface EventReceiptRow {
  id: string;
  received_at: number;
  duplicate: boolean | 0 | 1;
  remote_address: string | null;
  secret_index: number | null;
}

/**
 * Maps an event row and its receipts to the detail view (without deliveries): the body is a
 * plain Uint8Array copy, headers in arrival order with names as sent.
 *
 * @example
 * ```ts
 * const detail = { ...toEventDetail(row, receipts), deliveries };
 * ```
 */
export function toEventDetail(
  row: EventDetailRow,
  receipts: readonly EventReceiptRow[],
): Omit<EventDetail, "deliveries"> {
  const views = receipts.map(
    (receipt): ReceiptView => ({
      id: receipt.id,
      receivedAt: isoTime(receipt.received_at),
      duplicate: receipt.duplicate === true || receipt.duplicate === 1,
      remoteAddress: receipt.remote_address,
      secretIndex: receipt.secret_index,
    }),
  );
  return {
    ...toEventSummary({ ...row, receipt_count: views.length }),
    occurredAt: isoTime(row.occurred_at),
    orderingKey: row.ordering_key,
    version: row.version,
    headers:
      typeof row.headers === "string"
        ? (JSON.parse(row.headers) as Array<[string, string]>)
        : row.headers,
    body: new Uint8Array(row.body.buffer, row.body.byteOffset, row.body.byteLength).slice(),
    purgedAt: isoTime(row.purged_at),
    receipts: views,
  };
}

/** A receipts row as both drivers select it for receipt listings. */
export interface ReceiptRow {
  id: string;
  event_id: string | null;
  source: string;
  received_at: number;
  duplicate: boolean | 0 | 1;
  remote_address: string | null;
  status: number | null;
  code: string | null;
  size: number | null;
  header_names: string | string[] | null;
}

/**
 * Maps a receipts row (accepted, duplicate or rejected) to its record.
 *
 * @example
 * ```ts
 * toReceiptRecord(row).code; // "HOOKINBOX_SIGNATURE_MISMATCH"
 * ```
 */
export function toReceiptRecord(row: ReceiptRow): ReceiptRecord {
  return {
    id: row.id,
    source: row.source,
    receivedAt: isoTime(Number(row.received_at)),
    eventId: row.event_id,
    duplicate: row.duplicate === true || row.duplicate === 1,
    remoteAddress: row.remote_address,
    status: row.status,
    code: row.code,
    size: row.size,
    headerNames:
      typeof row.header_names === "string"
        ? (JSON.parse(row.header_names) as string[])
        : row.header_names,
  };
}
