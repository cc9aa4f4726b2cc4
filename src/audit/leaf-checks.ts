import type { IdentitySpec } from "../providers/types.ts";
import type { AuditLeafRecord } from "../store/audit-types.ts";
import { firstReceiptLeafHashOf } from "./first-receipt-leaf.ts";
import { leafFieldsOf, leafHashOf, type StoredEventForLeaf } from "./leaf.ts";
import { receiptLeafHashOf } from "./receipt-leaf.ts";
import { type DerivedField, rederiveIdentity } from "./rederive.ts";
import { retentionLeafHashOf } from "./retention-leaf.ts";
import { parseRetentionLeafId } from "./retention-record.ts";

/**
 * Rechecks a duplicate's receipt leaf against the receipt row as stored (present, with its
 * event's dedup key): null when it holds, else the defect's reason.
 *
 * @example
 * ```ts
 * checkReceipt(record); // null, or "the receipt as stored does not match its leaf"
 * ```
 */
export function checkReceipt(
  record: AuditLeafRecord & { receipt: NonNullable<AuditLeafRecord["receipt"]> },
): string | null {
  const { receipt } = record;
  if (!receipt.duplicate) return "the receipt as stored is not a duplicate's, as its leaf is";
  const recomputed = receiptLeafHashOf({
    seq: record.seq,
    receiptId: receipt.id,
    source: receipt.source,
    dedupKey: receipt.dedupKey ?? "",
    receivedAt: receipt.receivedAt,
    remoteAddress: receipt.remoteAddress,
    secretIndex: receipt.secretIndex,
    size: receipt.size,
  });
  return recomputed.equals(record.hash) ? null : "the receipt as stored does not match its leaf";
}

/**
 * Rechecks a retention leaf against the record its id holds: null when it holds.
 *
 * @example
 * ```ts
 * checkRetention(record); // null, or "the retention record as stored does not match its leaf"
 * ```
 */
export function checkRetention(record: AuditLeafRecord): string | null {
  const fields = parseRetentionLeafId(record.eventId);
  if (!fields) return "the retention record as stored is malformed";
  const recomputed = retentionLeafHashOf({ seq: record.seq, ...fields });
  return recomputed.equals(record.hash)
    ? null
    : "the retention record as stored does not match its leaf";
}

/**
 * What an event leaf commits to of its first receipt (version-2 leaves), where verify got it.
 *
 * @example
 * ```ts
 * const first: FirstReceiptPart = { receiptId: "rcp_X", remoteAddress: null, secretIndex: 0, disagrees: false };
 * ```
 */
export interface FirstReceiptPart {
  readonly receiptId: string;
  readonly remoteAddress: string | null;
  readonly secretIndex: number | null;
  /** The receipt row as stored disagrees with its event (secret index, kind). */
  readonly disagrees: boolean;
  /** The receipt row's own source and receive time (the event's at accept). */
  readonly source?: string;
  readonly receivedAt?: number;
}

/** Recomputes an event's leaf: version 2 kind 1 with its first receipt's part, else version 1. */
function eventLeafHash(seq: number, event: StoredEventForLeaf, first: FirstReceiptPart | null) {
  const fields = leafFieldsOf(seq, event);
  if (!first) return leafHashOf(fields);
  const { receiptId, remoteAddress, secretIndex } = first;
  return firstReceiptLeafHashOf({ ...fields, receiptId, remoteAddress, secretIndex });
}

/**
 * The identity rules of a configured source, or null when the config has no such source.
 *
 * @example
 * ```ts
 * const rules: IdentityRules = (source) => sources.get(source)?.identity ?? null;
 * ```
 */
export type IdentityRules = (source: string) => IdentitySpec | null;

const fieldList = (fields: readonly DerivedField[]) => fields.join(", ");

/**
 * Rechecks one stored event (and, for a version-2 leaf, its first receipt's part) against its
 * leaf and, with `rules`, its derived columns against its stored payload: null when all hold,
 * else the defect's reason. A leaf that does not match the event as stored but matches it with
 * the columns read again from the payload names the edited columns, not the leaf.
 *
 * @example
 * ```ts
 * const { reason, recomputed } = checkEvent({ ...record, event }, rules, null);
 * ```
 */
export function checkEvent(
  record: AuditLeafRecord & { event: NonNullable<AuditLeafRecord["event"]> },
  rules: IdentitySpec | null,
  first: FirstReceiptPart | null,
): { reason: string | null; recomputed: Buffer | null } {
  const { event, seq } = record;
  let recomputed: Buffer;
  try {
    recomputed = eventLeafHash(seq, event, first);
  } catch {
    return { reason: "the purged event's stored digests are malformed", recomputed: null };
  }
  const payloadKept = event.body.length > 0 || event.headers.length > 0 || !event.purged;
  const again =
    rules && payloadKept ? rederiveIdentity(rules, event.headers, event.body, event) : null;
  if (!recomputed.equals(record.hash)) {
    if (again?.ok && again.differing.length > 0) {
      const fixed = eventLeafHash(seq, { ...event, ...again.identity }, first);
      if (fixed.equals(record.hash)) {
        return {
          reason: `the stored ${fieldList(again.differing)} does not match its leaf and what the source's identity rules read from the stored payload`,
          recomputed,
        };
      }
    }
    if (first?.disagrees) {
      return { reason: "the first receipt as stored does not match its leaf", recomputed };
    }
    // The receipt keeps the source and receive time the event was accepted with: when the leaf
    // matches with those, the event row's own were edited.
    const asAccepted = {
      ...event,
      source: first?.source ?? event.source,
      receivedAt: first?.receivedAt ?? event.receivedAt,
    };
    if (
      first &&
      (asAccepted.source !== event.source || asAccepted.receivedAt !== event.receivedAt) &&
      eventLeafHash(seq, asAccepted, first).equals(record.hash)
    ) {
      return { reason: "the event as stored does not match its leaf", recomputed };
    }
    // One hash covers both rows of a version-2 leaf: which of them changed cannot be told.
    const reason = first
      ? "the event or its first receipt as stored does not match its leaf"
      : "the event as stored does not match its leaf, or its first receipt row is missing";
    return { reason, recomputed };
  }
  if (again && !again.ok) {
    return {
      reason: `the source's identity rules cannot read the stored payload (${again.code})`,
      recomputed,
    };
  }
  if (again && again.differing.length > 0) {
    return {
      reason: `the stored ${fieldList(again.differing)} is not what the source's identity rules read from the stored payload`,
      recomputed,
    };
  }
  return { reason: null, recomputed };
}
