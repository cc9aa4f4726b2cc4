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
          },
  };
}
