import type pg from "pg";
import { toReceiptRecord } from "../core/event-views.ts";
import { receiptTerms, renderWhere } from "../core/filters.ts";
import { pageLimit, pageOf } from "../core/paging.ts";
import type { ReceiptPage, ReceiptQuery } from "../types.ts";
import { withRetry } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * Newest-first receipts, optionally rejections only and by source; never more than `limit`.
 *
 * @example
 * ```ts
 * await listReceiptsPostgres(pool, schemaNames("hookinbox"), { rejected: true, limit: 50 });
 * ```
 */
export async function listReceiptsPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  query: ReceiptQuery,
): Promise<ReceiptPage> {
  const limit = pageLimit(query.limit);
  const { where, values } = renderWhere(receiptTerms(query), (n) => `$${n}`);
  values.push(limit + 1);
  const { rows } = await withRetry(() =>
    pool.query(
      `SELECT id, source, received_at, event_id, duplicate, remote_address, status, code, size, header_names
       FROM ${t.receipts} ${where} ORDER BY id DESC LIMIT $${values.length}`,
      values,
    ),
  );
  return pageOf(rows, limit, toReceiptRecord);
}
