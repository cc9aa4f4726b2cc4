import type Database from "better-sqlite3";
import { type ReceiptRow, toReceiptRecord } from "../core/event-views.ts";
import { receiptTerms, renderWhere } from "../core/filters.ts";
import { pageLimit, pageOf } from "../core/paging.ts";
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
  const statements = new Map<string, Database.Statement<unknown[], ReceiptRow>>();
  return (query) => {
    const limit = pageLimit(query.limit);
    const { where, values } = renderWhere(receiptTerms(query), () => "?");
    const sql = `SELECT id, source, received_at, event_id, duplicate, remote_address, status, code, size, header_names
                 FROM receipts ${where} ORDER BY id DESC LIMIT ?`;
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return pageOf(statement.all(...values, limit + 1), limit, toReceiptRecord);
  };
}
