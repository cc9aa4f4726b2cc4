import type Database from "better-sqlite3";
import type { EventDetail, ReceiptView } from "../types.ts";

const eventSql = `
  SELECT id, source, dedup_key, type, occurred_at, ordering_key, version, status, received_at,
         body, headers, purged_at
  FROM events WHERE id = ?`;

// Rejections have no event_id, so they never appear here. Served by the partial
// receipts (event_id, received_at, id) index, already in order.
const receiptsSql = `
  SELECT id, received_at, duplicate, remote_address, secret_index
  FROM receipts WHERE event_id = ?
  ORDER BY received_at, id`;

interface EventRow {
  id: string;
  source: string;
  dedup_key: string;
  type: string | null;
  occurred_at: number | null;
  ordering_key: string | null;
  version: number | null;
  status: string;
  received_at: number;
  body: Buffer;
  headers: string;
  purged_at: number | null;
}

interface ReceiptRow {
  id: string;
  received_at: number;
  duplicate: 0 | 1;
  remote_address: string | null;
  secret_index: number | null;
}

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
  const event = db.prepare<[string], EventRow>(eventSql);
  const receipts = db.prepare<[string], ReceiptRow>(receiptsSql);

  return (id) => {
    const row = event.get(id);
    if (!row) return null;
    const receiptViews = receipts.all(id).map(
      (receipt): ReceiptView => ({
        id: receipt.id,
        receivedAt: new Date(receipt.received_at).toISOString(),
        duplicate: receipt.duplicate === 1,
        remoteAddress: receipt.remote_address,
        secretIndex: receipt.secret_index,
      }),
    );
    return {
      id: row.id,
      source: row.source,
      dedupKey: row.dedup_key,
      type: row.type,
      status: row.status,
      receivedAt: new Date(row.received_at).toISOString(),
      receiptCount: receiptViews.length,
      occurredAt: row.occurred_at === null ? null : new Date(row.occurred_at).toISOString(),
      orderingKey: row.ordering_key,
      version: row.version,
      headers: JSON.parse(row.headers) as Array<[string, string]>,
      body: new Uint8Array(row.body),
      purgedAt: row.purged_at === null ? null : new Date(row.purged_at).toISOString(),
      receipts: receiptViews,
    };
  };
}
