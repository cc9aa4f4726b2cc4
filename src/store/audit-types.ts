import type { SubtreeId } from "../audit/merkle.ts";

/** The current tree: what the next append extends. */
export interface AuditTree {
  readonly size: number;
  /** The right edge (see src/audit/compact-range.ts). */
  readonly frontier: Buffer;
}

/** One leaf with the event it commits to as stored now (null when the event row is gone). */
export interface AuditLeafRecord {
  readonly seq: number;
  readonly eventId: string;
  readonly hash: Buffer;
  readonly event: {
    readonly source: string;
    readonly dedupKey: string;
    readonly receivedAt: number;
    readonly body: Buffer;
    readonly headers: Array<[string, string]>;
    readonly purged: { readonly bodySha256: Buffer; readonly headersSha256: Buffer } | null;
    /** The columns ingest derived from the payload (re-derived by verify). */
    readonly type: string | null;
    readonly orderingKey: string | null;
    readonly occurredAt: number | null;
    readonly version: number | null;
    /** The secret index stored with the event (its first receipt's, copied at accept). */
    readonly secretIndex?: number | null;
  } | null;
  /**
   * For a receipt leaf (a duplicate's arrival: `eventId` holds the receipt's id), the receipt as
   * stored now and its event's dedup key (null when the event row is gone); null when the receipt
   * row is gone or this is an event leaf.
   */
  readonly receipt: {
    readonly id: string;
    readonly source: string;
    readonly dedupKey: string | null;
    readonly receivedAt: number;
    readonly remoteAddress: string | null;
    readonly secretIndex: number | null;
    readonly size: number;
    readonly duplicate: boolean;
    /** The event the receipt belongs to. */
    readonly eventId?: string | null;
  } | null;
  /**
   * For an event leaf, its first receipt as stored now, found by the id it shares with its event
   * (`rcp_` + the event's ULID, since version-2 event leaves); null when there is none.
   */
  readonly firstReceipt?: {
    readonly id: string;
    readonly source: string;
    readonly receivedAt: number;
    readonly remoteAddress: string | null;
    readonly secretIndex: number | null;
    readonly duplicate: boolean;
  } | null;
  /** What retention kept of the first receipt when it deleted it while the event stayed. */
  readonly firstReceiptKept?: {
    readonly remoteAddress: string | null;
    readonly secretIndex: number | null;
  } | null;
}

/** A signed tree head as stored. */
export interface StoredTreeHead {
  readonly size: number;
  readonly root: Buffer;
  readonly signedAt: number;
  /** Hex of the raw 32-byte Ed25519 public key that signed it. */
  readonly publicKey: string;
  readonly signature: Buffer;
}

/**
 * The audit log's storage: leaves, closed subtrees and signed heads. On SQLite (one writer) the
 * append happens inside `accept`, and nothing is ever pending. On PostgreSQL `accept` queues the
 * leaf unsequenced and a sequencer (one lease holder across processes, src/audit/sequencer.ts)
 * appends pending leaves in batches with `auditSequence`, within `audit.maxMergeDelay`.
 */
export interface AuditStore {
  /**
   * Appends up to `limit` pending leaves to the tree, in the order they were queued, in one
   * transaction; returns how many (always 0 on SQLite). Safe from several processes at once.
   */
  auditSequence(limit: number): Promise<number>;
  /** How many accepted leaves wait to be sequenced (always 0 on SQLite). */
  auditPendingCount(): Promise<number>;
  /** Whether the leaf of this event (or duplicate receipt) id waits to be sequenced. */
  auditLeafPending(leafId: string): Promise<boolean>;
  /**
   * Takes or renews the sequencer lease for `holder` for `ttlMs`: true when `holder` holds it.
   * `ttlMs` 0 gives it up. SQLite has nothing to sequence: always false.
   */
  auditSequencerLease(holder: string, ttlMs: number): Promise<boolean>;
  /** The tree as of the last committed append. */
  auditTree(): Promise<AuditTree>;
  /** Hashes of perfect subtrees (level 0 = leaves), keyed by `subtreeKey`; absent ones omitted. */
  auditSubtrees(ids: readonly SubtreeId[]): Promise<Map<string, Buffer>>;
  /** The leaf of an event, or null when it is not in the log. */
  auditLeafOf(eventId: string): Promise<{ seq: number; hash: Buffer } | null>;
  /** Leaves with seq > afterSeq in seq order, at most `limit`, each with its event as stored. */
  auditLeafPage(afterSeq: number, limit: number): Promise<AuditLeafRecord[]>;
  /** Every retention leaf (its seq and its id, which holds the record: see retention-record.ts). */
  auditRetentionLeaves(): Promise<Array<{ seq: number; eventId: string }>>;
  /** Ids (> afterId, ascending, at most `limit`) of events that have no leaf. */
  auditUnloggedEvents(afterId: string, limit: number): Promise<string[]>;
  saveTreeHead(head: StoredTreeHead): Promise<void>;
  /** The newest stored head (largest size, then newest), or null. */
  latestTreeHead(): Promise<StoredTreeHead | null>;
  /** The newest stored head of exactly this size, or null. */
  treeHeadOfSize(size: number): Promise<StoredTreeHead | null>;
  /**
   * Stored heads signed at or before `at` (ms), largest size first, at most `limit`: what verify
   * checks retention against (signatures unchecked here: verify checks them with a trusted key).
   */
  treeHeadsSignedBy(at: number, limit: number): Promise<StoredTreeHead[]>;
}
