import { type LeafFields, sha256 } from "./leaf.ts";
import { receiptLeafHead } from "./receipt-leaf.ts";

/**
 * What a new event's leaf commits to since version 2 kind 1: the event (as a version-1 leaf) and
 * its first receipt's own row: its id, where it came from and under which secret.
 *
 * @example
 * ```ts
 * const fields: FirstReceiptLeafFields = { ...leafFieldsOf(7, event), receiptId: "rcp_1", remoteAddress: null, secretIndex: 0 };
 * ```
 */
export interface FirstReceiptLeafFields extends LeafFields {
  /** The first receipt's id (`rcp_…`). */
  readonly receiptId: string;
  /** Where it came from (after trusted proxies); null when unknown. */
  readonly remoteAddress: string | null;
  /** Which of the source's secrets verified it (its index, never the secret); null: none. */
  readonly secretIndex: number | null;
}

/**
 * The leaf kind after the sequence number: a new event with its first receipt.
 *
 * @example
 * ```ts
 * encodeFirstReceiptLeaf(fields)[9]; // EVENT_LEAF_KIND
 * ```
 */
export const EVENT_LEAF_KIND = 1;

/**
 * The bytes of a new event's leaf (version 2, kind 1), written from `offset` on: the receipt
 * leaf's layout (kind 2) with the payload's two digests where a receipt has its size.
 *
 * | bytes | field |
 * |---|---|
 * | 1 | version, `0x02` |
 * | 8 | seq, unsigned big-endian |
 * | 1 | kind, `0x01` (event and its first receipt) |
 * | 4 + n | first receipt id, source, dedup key: each byte length (u32 BE) + UTF-8 |
 * | 8 | received_at, ms since the epoch, signed big-endian |
 * | 1 (+ 4 + n) | remote address: `0x00` absent, or `0x01` and the text |
 * | 1 (+ 8) | secret index: `0x00` absent, or `0x01` and the index, signed big-endian |
 * | 32 | SHA-256 of the raw body |
 * | 32 | SHA-256 of the canonical headers |
 *
 * @example
 * ```ts
 * encodeFirstReceiptLeaf({ seq: 7, receiptId: "rcp_…", remoteAddress: null, secretIndex: 0, ...leafFieldsOf(7, event) });
 * ```
 */
export function encodeFirstReceiptLeaf(fields: FirstReceiptLeafFields, offset = 0): Buffer {
  if (fields.bodySha256.length !== 32 || fields.headersSha256.length !== 32) {
    throw new RangeError("leaf digests must be 32 bytes");
  }
  const { out, at } = receiptLeafHead(fields, EVENT_LEAF_KIND, offset, 64);
  out.set(fields.bodySha256, at);
  out.set(fields.headersSha256, at + 32);
  return out;
}

/**
 * RFC 6962's leaf hash of a new event's leaf, SHA-256(0x00 || {@link encodeFirstReceiptLeaf}).
 *
 * @example
 * ```ts
 * firstReceiptLeafHashOf({ ...leafFieldsOf(seq, event), receiptId, remoteAddress, secretIndex });
 * ```
 */
export function firstReceiptLeafHashOf(fields: FirstReceiptLeafFields): Buffer {
  const prefixed = encodeFirstReceiptLeaf(fields, 1);
  prefixed[0] = 0;
  return sha256(prefixed);
}
