import type { KeyObject } from "node:crypto";
import type { IdentitySpec } from "../providers/types.ts";
import type { AuditLeafRecord, AuditStore } from "../store/audit-types.ts";
import { appendToRange, type CompactRange, EMPTY_RANGE, rangeRoot } from "./compact-range.ts";
import {
  checkEvent,
  checkReceipt,
  checkRetention,
  type FirstReceiptPart,
  type IdentityRules,
} from "./leaf-checks.ts";
import {
  consistencyRanges,
  hashRanges,
  inclusionRanges,
  type LeafRange,
  subtreesFor,
} from "./merkle.ts";
import type { RetentionRecordKind } from "./retention-leaf.ts";
import { firstReceiptIdOf, isRetentionLeafId, retentionIndex } from "./retention-record.ts";
import { verifyTreeHead } from "./tree-head.ts";

/** A tree size and its root: a head before (or without) its signature. */
export interface TreeState {
  readonly size: number;
  readonly root: Buffer;
}

/** Hashes ranges of the stored tree from its stored subtrees: one lookup batch. */
async function hashStoredRanges(
  store: Pick<AuditStore, "auditSubtrees">,
  ranges: readonly LeafRange[],
): Promise<Buffer[]> {
  return hashRanges(ranges, await store.auditSubtrees(subtreesFor(ranges)));
}

/**
 * The stored tree's root at `size` (≤ the current size), from O(log n) stored subtrees.
 *
 * @example
 * ```ts
 * const root = await rootAt(store, 1000);
 * ```
 */
export async function rootAt(store: Pick<AuditStore, "auditSubtrees">, size: number) {
  const [root] = await hashStoredRanges(store, [{ start: 0, end: size }]);
  return root!;
}

/**
 * The current tree (size and root) from the tree row alone.
 *
 * @example
 * ```ts
 * const { size, root } = await currentTree(store);
 * ```
 */
export async function currentTree(store: Pick<AuditStore, "auditTree">): Promise<TreeState> {
  const { size, frontier } = await store.auditTree();
  const hashes: Buffer[] = [];
  for (let at = 0; at < frontier.length; at += 32) hashes.push(frontier.subarray(at, at + 32));
  return { size, root: rangeRoot({ size, hashes }) };
}

/** An inclusion proof of one event's leaf in the tree of `size` leaves. */
export interface InclusionProofResult {
  readonly eventId: string;
  readonly seq: number;
  readonly size: number;
  readonly leafHash: Buffer;
  readonly proof: Buffer[];
}

/**
 * The inclusion proof of an event's leaf in the stored tree of `size` leaves; null when the
 * event has no leaf or its leaf is not within `size`.
 *
 * @example
 * ```ts
 * const p = await proveInclusion(store, "evt_…", head.size);
 * verifyInclusion(p.seq, p.size, p.leafHash, p.proof, head.root); // true
 * ```
 */
export async function proveInclusion(
  store: Pick<AuditStore, "auditLeafOf" | "auditSubtrees">,
  eventId: string,
  size: number,
): Promise<InclusionProofResult | null> {
  const leaf = await store.auditLeafOf(eventId);
  if (!leaf || leaf.seq >= size) return null;
  const proof = await hashStoredRanges(store, inclusionRanges(leaf.seq, size));
  return { eventId, seq: leaf.seq, size, leafHash: leaf.hash, proof };
}

/**
 * The consistency proof from the stored tree of `from` leaves to that of `to` leaves.
 *
 * @example
 * ```ts
 * const proof = await proveConsistency(store, older.size, newer.size);
 * ```
 */
export async function proveConsistency(
  store: Pick<AuditStore, "auditSubtrees">,
  from: number,
  to: number,
): Promise<Buffer[]> {
  return hashStoredRanges(store, consistencyRanges(from, to));
}

/** The first problem `verifyLog` found, naming the leaf and event where it can. */
export interface LogDefect {
  readonly seq: number | null;
  readonly eventId: string | null;
  readonly reason: string;
}

/** What `verifyLog` could not check in full, by kind (none of these is a defect). */
export interface LogCoverage {
  /** Events whose derived columns were not re-derived: their source is not in the config. */
  readonly notConfigured: ReadonlyMap<string, number>;
  /** Leaves whose event's payload retention purged: covered by the digests they commit to. */
  readonly digestOnly: readonly LeafRange[];
  /**
   * Leaves whose row (event, receipt, or an event's first receipt) retention deleted, and the
   * retention leaves that record those deletions; `unrecorded`: leaves below the era boundary
   * (see {@link verifyLog}) whose row is gone with no record, excused by the expiry anchor alone.
   */
  readonly retention: {
    readonly leaves: readonly LeafRange[];
    readonly recordedIn: number[];
    readonly unrecorded: readonly LeafRange[];
  };
}

/** Adds `seq` to ascending ranges (end exclusive), extending the last one when adjacent. */
function addSeq(ranges: LeafRange[], seq: number): void {
  const last = ranges[ranges.length - 1];
  if (last && last.end === seq) ranges[ranges.length - 1] = { start: last.start, end: seq + 1 };
  else ranges.push({ start: seq, end: seq + 1 });
}

/** What `verifyLog` checked and the first defect, if any. */
export interface LogVerification {
  readonly ok: boolean;
  /** Leaves rechecked against their events. */
  readonly leaves: number;
  readonly defect: LogDefect | null;
  /** What was covered only in part (re-derivation skipped, payload purged). */
  readonly coverage: LogCoverage;
}

/** A receipt leaf names its receipt (`rcp_…`) where an event leaf names its event. */
const isReceiptLeaf = (record: AuditLeafRecord) =>
  record.eventId.startsWith("rcp_") && !record.event;

export type { IdentityRules };

/** How `verifyLog` tells an event removed by `retention.events` from a deleted one. */
export interface ExpiryPolicy {
  /** The key heads must be signed with (never the one a stored head names). */
  readonly trustedKey: KeyObject;
  /** `retention.events` in ms; null when it is off: then no event may be missing. */
  readonly eventsMs: number | null;
  /** The verifier's clock (ms). */
  readonly now: number;
  /** `retention.receipts` in ms; null or absent when it is off. */
  readonly receiptsMs?: number | null;
}

/** How many stored heads signed before the cut verify looks through for one that verifies. */
const anchorCandidates = 100;

/**
 * The head retention is checked against: the largest stored head signed at or before
 * `now - eventsMs` whose signature verifies with the trusted key. Its leaves were appended before
 * that time, so their events may have expired; any later leaf's event may not be missing.
 * Nothing the database says about retention (its `events_before` mark, a leaf's event id) is
 * trusted: only a signature and the verifier's own clock and policy.
 */
async function expiryAnchor(
  store: Pick<AuditStore, "treeHeadsSignedBy">,
  expiry: ExpiryPolicy | undefined,
  windowMs: number | null | undefined = expiry?.eventsMs,
): Promise<TreeState | null> {
  if (!expiry || windowMs === null || windowMs === undefined) return null;
  const heads = await store.treeHeadsSignedBy(expiry.now - windowMs, anchorCandidates);
  return heads.find((h) => verifyTreeHead(h, expiry.trustedKey)) ?? null;
}

/**
 * Rechecks the stored log against a trusted head: walks every leaf in order (a page at a time,
 * by a seq cursor: never the whole table in memory), recomputes each leaf from its event as
 * stored now, compares it with the stored leaf hash, folds the recomputed leaves into a root and
 * compares that with the head's root at the head's size; then looks for events with no leaf.
 * A leaf whose event (or receipt, or first receipt) row is gone is folded in as stored only when
 * both a retention leaf in the log records the deletion of an id range holding that row's id and
 * the leaf lies below the expiry anchor (see {@link ExpiryPolicy}): the largest head signed with
 * the trusted key at or before `now - retention.events` (`retention.receipts` for receipts),
 * whose root is checked too. Below the era boundary (the first leaf the walk recomputes as a
 * version-2 event leaf or a retention leaf: no version before retention was recorded wrote one),
 * the anchor alone excuses a missing event or receipt row, as it did then. Any other missing row
 * is a defect. A retention leaf is recomputed from the record its id holds
 * (src/audit/retention-record.ts), a version-2 event leaf from the event and its first receipt
 * (or what retention kept of it). Stops at the first defect and names it.
 *
 * @example
 * ```ts
 * const result = await verifyLog(store, trustedHead, { expiry: { trustedKey, eventsMs, now: Date.now() } });
 * if (!result.ok) console.log(result.defect); // { seq: 41, eventId: "evt_…", reason: "…" }
 * ```
 */
export async function verifyLog(
  store: Pick<
    AuditStore,
    "auditLeafPage" | "auditUnloggedEvents" | "treeHeadsSignedBy" | "auditRetentionLeaves"
  >,
  head: TreeState,
  options: {
    pageSize?: number;
    onProgress?: (leaves: number) => void;
    expiry?: ExpiryPolicy;
    /** Re-derive each event's derived columns with its source's rules (omitted: not checked). */
    identities?: IdentityRules;
  } = {},
): Promise<LogVerification> {
  const pageSize = options.pageSize ?? 1000;
  const notConfigured = new Map<string, number>();
  const digestOnly: LeafRange[] = [];
  const retained: LeafRange[] = [];
  const recordedIn = new Set<number>();
  const unrecorded: LeafRange[] = [];
  const coverage = (): LogCoverage => ({
    notConfigured,
    digestOnly,
    retention: { leaves: retained, recordedIn: [...recordedIn].sort((a, b) => a - b), unrecorded },
  });
  const anchor = await expiryAnchor(store, options.expiry);
  const expirableBelow = anchor?.size ?? 0;
  // A receipt leaf's row goes with its event (retention.events) or alone (retention.receipts).
  const receiptAnchor = await expiryAnchor(store, options.expiry, options.expiry?.receiptsMs);
  const receiptExpirableBelow = Math.max(expirableBelow, receiptAnchor?.size ?? 0);
  let range: CompactRange = EMPTY_RANGE;
  const fail = (seq: number | null, eventId: string | null, reason: string): LogVerification => ({
    ok: false,
    leaves: range.size,
    defect: { seq, eventId, reason },
    coverage: coverage(),
  });
  const checkRoot = (): LogVerification | null => {
    const root = () => rangeRoot(range);
    if (range.size === head.size && !root().equals(head.root))
      return fail(
        null,
        null,
        `the first ${head.size} leaves do not hash to the trusted head's root`,
      );
    if (
      (anchor && range.size === anchor.size && !root().equals(anchor.root)) ||
      (receiptAnchor && range.size === receiptAnchor.size && !root().equals(receiptAnchor.root))
    ) {
      return fail(
        null,
        null,
        `the first ${range.size} leaves do not hash to the root of the signed head retention is checked against`,
      );
    }
    return null;
  };
  const atStart = checkRoot();
  if (atStart) return atStart;
  const records = retentionIndex(await store.auditRetentionLeaves());
  // The era boundary: the first leaf recomputed as one only a version that records retention
  // writes (a version-2 event leaf with its first receipt, or a retention leaf). The walk is in
  // order, so until it has proven such a leaf, every leaf it reaches lies below the boundary.
  let recordingEra = false;
  /**
   * Whether a missing row of `kind` whose leaf lies below `below` is excused: at or above the era
   * boundary (or `recordedOnly`) only when a retention leaf covers its id; below it, by the anchor
   * alone, as before retention was recorded.
   */
  const excused = (
    seq: number,
    kind: RetentionRecordKind,
    id: string,
    below: number,
    recordedOnly = false,
  ) => {
    if (seq >= below) return false;
    const by = records.coveringLeaf(kind, id);
    if (by !== null) {
      recordedIn.add(by);
      addSeq(retained, seq);
      return true;
    }
    if (recordingEra || recordedOnly) return false;
    addSeq(unrecorded, seq);
    return true;
  };
  /** What to fold for a leaf (its recomputed or, for a row retention deleted, stored hash). */
  const foldOf = (record: AuditLeafRecord): { reason: string } | { hash: Buffer } => {
    const { seq, eventId, hash } = record;
    const stored = (ok: boolean, reason: string) => (ok ? { hash } : { reason });
    if (isRetentionLeafId(eventId)) {
      const reason = checkRetention(record);
      if (reason) return { reason };
      recordingEra = true;
      return { hash };
    }
    if (isReceiptLeaf(record)) {
      const { receipt } = record;
      if (!receipt) {
        const ok = excused(seq, "receipts", eventId, receiptExpirableBelow);
        return stored(ok, "the leaf's receipt row is missing");
      }
      if (receipt.dedupKey === null) {
        const ok = !!receipt.eventId && excused(seq, "events", receipt.eventId, expirableBelow);
        return stored(ok, "the receipt's event row is missing");
      }
      const reason = checkReceipt({ ...record, receipt });
      return reason ? { reason } : { hash };
    }
    if (!record.event) {
      return stored(
        excused(seq, "events", eventId, expirableBelow),
        "the leaf's event row is missing",
      );
    }
    const event = record.event;
    let first: FirstReceiptPart | null = null;
    const row = record.firstReceipt;
    if (row) {
      const disagrees =
        row.duplicate || (event.secretIndex !== undefined && row.secretIndex !== event.secretIndex);
      first = {
        receiptId: row.id,
        remoteAddress: row.remoteAddress,
        secretIndex: row.secretIndex,
        disagrees,
        source: row.source,
        receivedAt: row.receivedAt,
      };
    } else if (record.firstReceiptKept) {
      const receiptId = firstReceiptIdOf(eventId);
      // Only a version-2 leaf covers a first receipt: if the hash holds, this leaf is at or
      // above the boundary, so a record is needed.
      if (!excused(seq, "receipts", receiptId, receiptExpirableBelow, true)) {
        return { reason: "the leaf's first receipt row is missing" };
      }
      first = { receiptId, ...record.firstReceiptKept, disagrees: false };
    }
    let rules: IdentitySpec | null = null;
    if (options.identities) {
      rules = options.identities(event.source);
      if (!rules) notConfigured.set(event.source, (notConfigured.get(event.source) ?? 0) + 1);
    }
    const { reason, recomputed } = checkEvent({ ...record, event }, rules, first);
    if (reason !== null || recomputed === null) {
      return { reason: reason ?? "the event does not match its leaf" };
    }
    if (event.purged && event.body.length === 0 && event.headers.length === 0)
      addSeq(digestOnly, seq);
    if (first) recordingEra = true;
    return { hash: recomputed };
  };
  for (;;) {
    const page = await store.auditLeafPage(range.size - 1, pageSize);
    for (const record of page) {
      if (record.seq !== range.size) {
        return fail(range.size, null, `leaf ${range.size} is missing (next is ${record.seq})`);
      }
      const fold = foldOf(record);
      if ("reason" in fold) return fail(record.seq, record.eventId, fold.reason);
      range = appendToRange(range, fold.hash).range;
      const mismatch = checkRoot();
      if (mismatch) return mismatch;
    }
    options.onProgress?.(range.size);
    if (page.length < pageSize) break;
  }
  if (range.size < head.size || range.size < expirableBelow) {
    const [which, size] =
      head.size >= expirableBelow
        ? ["the head", head.size]
        : ["the signed head retention is checked against", expirableBelow];
    return fail(range.size, null, `the log ends at ${range.size} leaves; ${which} has ${size}`);
  }
  const unlogged = await store.auditUnloggedEvents("", 1);
  if (unlogged[0] !== undefined) return fail(null, unlogged[0], "the event has no leaf");
  return { ok: true, leaves: range.size, defect: null, coverage: coverage() };
}
