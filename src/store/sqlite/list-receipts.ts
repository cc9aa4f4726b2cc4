import type Database from "better-sqlite3";
import type { ReceiptPage, ReceiptQuery, ReceiptRecord } from "../types.ts";
import { decodeCursor, encodeCursor, pageLimit } from "./list-events.ts";

interface ReceiptRow {
  id: string;
  source: string;
  received_at: number;
  event_id: string | null;
  duplicate: 0 | 1;
  remote_address: string | null;
  status: number | null;
  code: string | null;
  size: number | null;
  header_names: string | null;
}

/**
 * Maps a receipts row to its API record.
 *
 * @example
 * ```ts
 * toReceiptRecord(row).code; // "HOOKINBOX_SIGNATURE_MISMATCH"
 * ```
 */
export function toReceiptRecord(
  row: Omit<ReceiptRow, "duplicate" | "header_names"> & {
    duplicate: boolean | 0 | 1;
    header_names: string | string[] | null;
  },
): ReceiptRecord {
  return {
    id: row.id,
    source: row.source,
    receivedAt: new Date(Number(row.received_at)).toISOString(),
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

/**
 * Prepares the receipts listing: newest first, optionally only rejections (served by the partial
 * receipts_rejected indexes) and by source, cursor-paged.
 *
 * @example
 * ```ts
 * const list = prepareListReceipts(db);
 * list({ rejected: true, source: "stripe", limit: 50 });
 * ```
 */
export function prepareListReceipts(db: Database.Database): (query: ReceiptQuery) => ReceiptPage {
  const statements = new Map<string, Database.Statement<[Record<string, unknown>], ReceiptRow>>();
  return (query) => {
    const limit = pageLimit(query.limit);
    const where: string[] = [];
    if (query.rejected === true) where.push("event_id IS NULL");
    if (query.rejected === false) where.push("event_id IS NOT NULL");
    if (query.source !== undefined) where.push("source = @source");
    if (query.cursor !== undefined) where.push("id < @cursor");
    const sql = `SELECT id, source, received_at, event_id, duplicate, remote_address, status, code, size, header_names
                 FROM receipts ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT @limit`;
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    const rows = statement.all({
      limit: limit + 1,
      source: query.source,
      cursor: query.cursor === undefined ? undefined : decodeCursor(query.cursor, "rcp"),
    });
    const page = rows.slice(0, limit);
    return {
      items: page.map(toReceiptRecord),
      nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.id) : null,
    };
  };
}
