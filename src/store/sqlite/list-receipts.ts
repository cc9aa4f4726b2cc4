import type Database from "better-sqlite3";
import { type ReceiptRow, toReceiptRecord } from "../core/event-views.ts";
import { decodeCursor, encodeCursor, pageLimit } from "../core/paging.ts";
import type { ReceiptPage, ReceiptQuery } from "../types.ts";

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
