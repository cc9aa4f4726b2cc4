import type { AuditLeafRecord } from "./audit-types.ts";

/** A leaf joined with its event (LEFT JOIN: event columns null when the row is gone). */
export interface LeafJoinRow {
  seq: number | string;
  event_id: string;
  hash: Buffer;
  source: string | null;
  dedup_key: string;
  received_at: number | string;
  body: Buffer;
  purged_at: number | string | null;
  body_sha256: Buffer | null;
  headers_sha256: Buffer | null;
  type: string | null;
  ordering_key: string | null;
  occurred_at: number | string | null;
  version: number | null;
  r_id: string | null;
  r_source: string | null;
  r_dedup_key: string | null;
  r_received_at: number | string | null;
  r_remote_address: string | null;
  r_secret_index: number | null;
  r_size: number | string | null;
  r_duplicate: boolean | number | null;
  r_event_id: string | null;
  secret_index: number | null;
  f_id: string | null;
  f_source: string | null;
  f_received_at: number | string | null;
  f_remote_address: string | null;
  f_secret_index: number | null;
  f_duplicate: boolean | number | null;
  f_mark: string | null;
}

/**
 * The receipt columns of the leaf page (both stores): a receipt leaf's row joined by its id.
 *
 * @example
 * ```ts
 * `SELECT l.seq, …, ${receiptLeafColumns} FROM audit_leaves l … ${receiptLeafJoin("receipts", "events")}`
 * ```
 */
export const receiptLeafColumns = `r.id AS r_id, r.source AS r_source, re.dedup_key AS r_dedup_key,
  r.received_at AS r_received_at, r.remote_address AS r_remote_address,
  r.secret_index AS r_secret_index, r.size AS r_size, r.duplicate AS r_duplicate,
  r.event_id AS r_event_id, e.secret_index AS secret_index, fr.id AS f_id, fr.source AS f_source,
  fr.received_at AS f_received_at, fr.remote_address AS f_remote_address,
  fr.secret_index AS f_secret_index, fr.duplicate AS f_duplicate, fm.value AS f_mark`;

/**
 * The joins that bring a receipt leaf's receipt row (by its id, in the leaf's event_id column) and
 * its event's dedup key; for an event leaf, its first receipt (by the id it shares with its event,
 * `rcp_` + the event's ULID) and the `first_receipt:` mark retention keeps when it deleted it.
 *
 * @example
 * ```ts
 * receiptLeafJoin('"hookinbox".receipts', '"hookinbox".events', '"hookinbox".retention_marks');
 * ```
 */
export const receiptLeafJoin = (receipts: string, events: string, marks: string) =>
  `LEFT JOIN ${receipts} r ON r.id = l.event_id AND l.event_id LIKE 'rcp_%'
   LEFT JOIN ${events} re ON re.id = r.event_id
   LEFT JOIN ${receipts} fr ON fr.id = 'rcp_' || substr(e.id, 5)
   LEFT JOIN ${marks} fm ON fm.name = 'first_receipt:' || l.event_id AND l.event_id LIKE 'evt_%'`;

/** The first receipt's kept fields (a `first_receipt:` mark's JSON), or null when unreadable. */
function keptOf(
  mark: string | null,
): { remoteAddress: string | null; secretIndex: number | null } | null {
  if (mark === null) return null;
  try {
    const kept = JSON.parse(mark) as { remoteAddress?: unknown; secretIndex?: unknown };
    const remoteAddress = typeof kept.remoteAddress === "string" ? kept.remoteAddress : null;
    const secretIndex = typeof kept.secretIndex === "number" ? kept.secretIndex : null;
    return { remoteAddress, secretIndex };
  } catch {
    return null;
  }
}

/**
 * Maps a leaf-with-event row of either store to an AuditLeafRecord (the caller decodes headers:
 * JSON text on SQLite, jsonb on PostgreSQL).
 *
 * @example
 * ```ts
 * rows.map((r) => leafRecordOf(r, JSON.parse(r.headers)));
 * ```
 */
export function leafRecordOf(
  row: LeafJoinRow,
  headers: Array<[string, string]> | null,
): AuditLeafRecord {
  return {
    seq: Number(row.seq),
    eventId: row.event_id,
    hash: row.hash,
    receipt:
      row.r_id === null || row.r_source === null
        ? null
        : {
            id: row.r_id,
            source: row.r_source,
            dedupKey: row.r_dedup_key,
            receivedAt: Number(row.r_received_at),
            remoteAddress: row.r_remote_address,
            secretIndex: row.r_secret_index,
            size: Number(row.r_size),
            duplicate: Boolean(row.r_duplicate),
            eventId: row.r_event_id,
          },
    firstReceipt:
      row.f_id === null
        ? null
        : {
            id: row.f_id,
            source: row.f_source ?? "",
            receivedAt: Number(row.f_received_at),
            remoteAddress: row.f_remote_address,
            secretIndex: row.f_secret_index,
            duplicate: Boolean(row.f_duplicate),
          },
    firstReceiptKept: keptOf(row.f_mark),
    event:
      row.source === null || headers === null
        ? null
        : {
            source: row.source,
            dedupKey: row.dedup_key,
            receivedAt: Number(row.received_at),
            body: row.body,
            headers,
            purged:
              row.purged_at === null
                ? null
                : {
                    bodySha256: row.body_sha256 ?? Buffer.alloc(0),
                    headersSha256: row.headers_sha256 ?? Buffer.alloc(0),
                  },
            type: row.type,
            orderingKey: row.ordering_key,
            occurredAt: row.occurred_at === null ? null : Number(row.occurred_at),
            version: row.version,
            secretIndex: row.secret_index,
          },
  };
}
