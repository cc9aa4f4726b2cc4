import { sha256, textLength, writeInt64, writeText } from "./leaf.ts";
import { RECEIPT_LEAF_VERSION } from "./receipt-leaf.ts";

/**
 * What a retention record says was deleted: whole events, or accepted receipts.
 *
 * @example
 * ```ts
 * const kind: RetentionRecordKind = "receipts";
 * ```
 */
export type RetentionRecordKind = "events" | "receipts";

/**
 * What a retention leaf commits to: one retention step's deletion (a batch of rows, or a dropped
 * PostgreSQL day partition), appended in the transaction that deleted them.
 *
 * @example
 * ```ts
 * const fields: RetentionLeafFields = { seq: 120, kind: "events", firstId, lastId, removed: 500, cut };
 * ```
 */
export interface RetentionLeafFields {
  /** 0-based position in the log (the leaf index). */
  readonly seq: number;
  readonly kind: RetentionRecordKind;
  /** The first and last id deleted, inclusive (ids are time-ordered: one range). */
  readonly firstId: string;
  readonly lastId: string;
  /** How many rows were deleted. */
  readonly removed: number;
  /** The cut: rows received before it (ms since the epoch) were deleted. */
  readonly cut: number;
}

/**
 * The leaf kind after the sequence number: a retention record.
 *
 * @example
 * ```ts
 * encodeRetentionLeaf(fields)[9]; // RETENTION_LEAF_KIND
 * ```
 */
export const RETENTION_LEAF_KIND = 3;
/**
 * The byte after the kind naming what was deleted.
 *
 * @example
 * ```ts
 * RETENTION_RECORD_KINDS.receipts; // 2
 * ```
 */
export const RETENTION_RECORD_KINDS = { events: 1, receipts: 2 } as const;

/**
 * The retention leaf's bytes, written from `offset` on:
 *
 * | bytes | field |
 * |---|---|
 * | 1 | version, `0x02` |
 * | 8 | seq, unsigned big-endian |
 * | 1 | kind, `0x03` (retention record) |
 * | 1 | what was deleted: `0x01` events, `0x02` accepted receipts |
 * | 4 + n | first id, then last id (inclusive): each byte length (u32 BE) + UTF-8 |
 * | 8 | rows deleted, signed big-endian |
 * | 8 | cut, ms since the epoch, signed big-endian |
 *
 * @example
 * ```ts
 * encodeRetentionLeaf({ seq: 120, kind: "events", firstId: "evt_…", lastId: "evt_…", removed: 500, cut });
 * ```
 */
export function encodeRetentionLeaf(fields: RetentionLeafFields, offset = 0): Buffer {
  if (fields.seq < 0) throw new RangeError(`negative leaf index: ${fields.seq}`);
  const out = Buffer.alloc(
    offset + 11 + textLength(fields.firstId) + textLength(fields.lastId) + 16,
  );
  out[offset] = RECEIPT_LEAF_VERSION;
  let at = writeInt64(out, offset + 1, fields.seq);
  out[at++] = RETENTION_LEAF_KIND;
  out[at++] = RETENTION_RECORD_KINDS[fields.kind];
  at = writeText(out, at, fields.firstId);
  at = writeText(out, at, fields.lastId);
  at = writeInt64(out, at, fields.removed);
  writeInt64(out, at, Math.floor(fields.cut));
  return out;
}

/**
 * RFC 6962's leaf hash of a retention leaf, SHA-256(0x00 || {@link encodeRetentionLeaf}).
 *
 * @example
 * ```ts
 * retentionLeafHashOf({ seq: 120, kind: "receipts", firstId, lastId, removed: 3, cut });
 * ```
 */
export function retentionLeafHashOf(fields: RetentionLeafFields): Buffer {
  const prefixed = encodeRetentionLeaf(fields, 1);
  prefixed[0] = 0;
  return sha256(prefixed);
}
