import { sha256, textLength, writeInt64, writeText } from "./leaf.ts";

/**
 * What a receipt leaf commits to: one duplicate's arrival (a request whose (source, dedup key)
 * was stored already). The first receipt of an event is its event's leaf.
 */
export interface ReceiptLeafFields {
  /** 0-based position in the log (the leaf index). */
  readonly seq: number;
  readonly receiptId: string;
  readonly source: string;
  readonly dedupKey: string;
  /** The receipt's received_at, integer ms since the epoch. */
  readonly receivedAt: number;
  /** Where it came from (after trusted proxies); null when unknown. */
  readonly remoteAddress: string | null;
  /** Which of the source's secrets verified it (its index, never the secret); null: none. */
  readonly secretIndex: number | null;
  /** Body size in bytes. */
  readonly size: number;
}

/** The receipt leaf's format version, its first byte (event leaves are version 1). */
export const RECEIPT_LEAF_VERSION = 2;
/** The leaf kind after the sequence number: a duplicate's receipt. */
export const RECEIPT_LEAF_KIND = 2;

/**
 * The bytes an optional text takes: 1 byte (0 absent, 1 present), then the text.
 *
 * @example
 * ```ts
 * optionalTextLength(null); // 1
 * ```
 */
export const optionalTextLength = (value: string | null) =>
  1 + (value === null ? 0 : textLength(value));

/**
 * The receipt leaf's bytes, written from `offset` on:
 *
 * | bytes | field |
 * |---|---|
 * | 1 | version, `0x02` |
 * | 8 | seq, unsigned big-endian |
 * | 1 | kind, `0x02` (receipt) |
 * | 4 + n | receipt id, source, dedup key: each byte length (u32 BE) + UTF-8 |
 * | 8 | received_at, ms since the epoch, signed big-endian |
 * | 1 (+ 4 + n) | remote address: `0x00` absent, or `0x01` and the text |
 * | 1 (+ 8) | secret index: `0x00` absent, or `0x01` and the index, signed big-endian |
 * | 8 | size in bytes, signed big-endian |
 *
 * @example
 * ```ts
 * receiptLeafHashOf(fields); // SHA-256(0x00 || encodeReceiptLeaf(fields))
 * ```
 */
export function encodeReceiptLeaf(fields: ReceiptLeafFields, offset = 0): Buffer {
  const { out, at } = receiptLeafHead(fields, RECEIPT_LEAF_KIND, offset, 8);
  writeInt64(out, at, fields.size);
  return out;
}

/**
 * What a version-2 leaf of kind 1 or 2 starts with: one arrival and its request.
 *
 * @example
 * ```ts
 * const head: ReceiptHeadFields = { seq, receiptId, source, dedupKey, receivedAt, remoteAddress, secretIndex };
 * ```
 */
export type ReceiptHeadFields = Omit<ReceiptLeafFields, "size">;

/**
 * Allocates a version-2 leaf of kind 1 (an event and its first receipt) or 2 (a duplicate's
 * receipt) with `tail` more bytes, and writes everything before the tail: version, seq, kind,
 * receipt id, source, dedup key, receive time, remote address and secret index. Returns the
 * buffer and where the tail goes.
 *
 * @example
 * ```ts
 * const { out, at } = receiptLeafHead(fields, 2, 0, 8);
 * writeInt64(out, at, fields.size);
 * ```
 */
export function receiptLeafHead(
  fields: ReceiptHeadFields,
  kind: number,
  offset: number,
  tail: number,
): { out: Buffer; at: number } {
  if (fields.seq < 0) throw new RangeError(`negative leaf index: ${fields.seq}`);
  const out = Buffer.alloc(
    offset +
      10 +
      textLength(fields.receiptId) +
      textLength(fields.source) +
      textLength(fields.dedupKey) +
      8 +
      optionalTextLength(fields.remoteAddress) +
      1 +
      (fields.secretIndex === null ? 0 : 8) +
      tail,
  );
  out[offset] = RECEIPT_LEAF_VERSION;
  let at = writeInt64(out, offset + 1, fields.seq);
  out[at++] = kind;
  at = writeText(out, at, fields.receiptId);
  at = writeText(out, at, fields.source);
  at = writeText(out, at, fields.dedupKey);
  at = writeInt64(out, at, Math.floor(fields.receivedAt));
  out[at++] = fields.remoteAddress === null ? 0 : 1;
  if (fields.remoteAddress !== null) at = writeText(out, at, fields.remoteAddress);
  out[at++] = fields.secretIndex === null ? 0 : 1;
  if (fields.secretIndex !== null) at = writeInt64(out, at, fields.secretIndex);
  return { out, at };
}

/**
 * RFC 6962's leaf hash of a receipt leaf, SHA-256(0x00 || {@link encodeReceiptLeaf}).
 *
 * @example
 * ```ts
 * receiptLeafHashOf({ seq: 3, receiptId: "rcp_…", source: "stripe", dedupKey: "evt_1", receivedAt, remoteAddress: "203.0.113.9", secretIndex: 0, size: 14 });
 * ```
 */
export function receiptLeafHashOf(fields: ReceiptLeafFields): Buffer {
  const prefixed = encodeReceiptLeaf(fields, 1);
  prefixed[0] = 0;
  return sha256(prefixed);
}
