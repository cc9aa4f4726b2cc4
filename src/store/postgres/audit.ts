import { encodeFirstReceiptLeaf } from "../../audit/first-receipt-leaf.ts";
import type { PayloadDigests } from "../../audit/leaf.ts";
import { LEAF_PREFIX } from "../../audit/merkle.ts";
import {
  encodeReceiptLeaf,
  RECEIPT_LEAF_VERSION,
  type ReceiptLeafFields,
} from "../../audit/receipt-leaf.ts";
import { encodeRetentionLeaf, type RetentionLeafFields } from "../../audit/retention-leaf.ts";

/** A leaf's encoding has its version byte, then its sequence number (8 bytes), then the rest. */
const seqEnd = 9;

/**
 * What audit_pending (migration 014) stores for the given new events, as two parameters of the
 * accept statement that queues them (postgres/insert-or-get-event.ts): per event, its leaf's
 * encoding (version 2 kind 1: the event and its first receipt) after the sequence number (`rests`,
 * in the events' order), and once the bytes before it (`prefix`: the RFC 6962 leaf prefix 0x00
 * and the encoding's version byte). The sequencer (audit-sequence.ts) numbers, hashes and links
 * them later; the digests of bodies and headers come with each accept's plan (core/accepts.ts).
 *
 * @example
 * ```ts
 * const [prefix, rests] = auditLeafValues([{ source, dedupKey, receivedAt, digests, receiptId, remoteAddress, secretIndex }]);
 * ```
 */
export function auditLeafValues(
  events: ReadonlyArray<{
    readonly source: string;
    readonly dedupKey: string;
    readonly receivedAt: number;
    readonly digests: PayloadDigests | null;
    readonly receiptId: string;
    readonly remoteAddress: string | null;
    readonly secretIndex: number | null;
  }>,
): [prefix: Buffer, rests: Buffer[]] {
  const encoded = events.map((event) => {
    if (!event.digests) throw new Error("auditLeafValues: an accept planned without digests");
    return encodeFirstReceiptLeaf({
      seq: 0,
      source: event.source,
      dedupKey: event.dedupKey,
      receivedAt: event.receivedAt,
      ...event.digests,
      receiptId: event.receiptId,
      remoteAddress: event.remoteAddress,
      secretIndex: event.secretIndex,
    });
  });
  return [
    Buffer.concat([LEAF_PREFIX, Buffer.from([RECEIPT_LEAF_VERSION])]),
    encoded.map((e) => e.subarray(seqEnd)),
  ];
}

/**
 * A retention leaf as hookinbox_audit_append_leaves takes it: its prefix (0x00 and the version
 * byte) and its encoding after the sequence number.
 *
 * @example
 * ```ts
 * const [prefix, rest] = retentionLeafParts({ kind: "events", firstId, lastId, removed, cut });
 * ```
 */
export function retentionLeafParts(
  fields: Omit<RetentionLeafFields, "seq">,
): [prefix: Buffer, rest: Buffer] {
  return [
    Buffer.concat([LEAF_PREFIX, Buffer.from([RECEIPT_LEAF_VERSION])]),
    encodeRetentionLeaf({ seq: 0, ...fields }).subarray(seqEnd),
  ];
}

/**
 * A duplicate's receipt leaf as audit_pending (migration 014) stores it: the bytes
 * before its sequence number (0x00 and the version byte) and its encoding after it. With null,
 * only the prefix is meaningful (a batch without duplicates still binds the parameter).
 *
 * @example
 * ```ts
 * const [prefix, rest] = receiptLeafParts({ receiptId, source, dedupKey, receivedAt, remoteAddress, secretIndex, size });
 * ```
 */
export function receiptLeafParts(
  fields: Omit<ReceiptLeafFields, "seq"> | null,
): [prefix: Buffer, rest: Buffer] {
  const prefix = Buffer.concat([LEAF_PREFIX, Buffer.from([RECEIPT_LEAF_VERSION])]);
  if (!fields) return [prefix, Buffer.alloc(0)];
  return [prefix, encodeReceiptLeaf({ seq: 0, ...fields }).subarray(seqEnd)];
}
