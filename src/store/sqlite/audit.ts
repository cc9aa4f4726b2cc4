import type Database from "better-sqlite3";
import {
  appendToRange,
  type CompactRange,
  decodeRange,
  encodeRange,
} from "../../audit/compact-range.ts";
import { firstReceiptLeafHashOf } from "../../audit/first-receipt-leaf.ts";
import type { PayloadDigests } from "../../audit/leaf.ts";
import { type ReceiptLeafFields, receiptLeafHashOf } from "../../audit/receipt-leaf.ts";
import { type RetentionLeafFields, retentionLeafHashOf } from "../../audit/retention-leaf.ts";
import { retentionLeafId } from "../../audit/retention-record.ts";
import type { TransactionFinisher } from "./group-commit.ts";

/**
 * The audit log's appends inside one SQLite transaction (see {@link prepareAuditAppend}).
 *
 * @example
 * ```ts
 * const log: AuditAppender = prepareAuditAppend(db);
 * ```
 */
export interface AuditAppender {
  /** Appends a new event's leaf (version 2 kind 1: the event and its first receipt). */
  append(
    eventId: string,
    event: {
      readonly source: string;
      readonly dedupKey: string;
      readonly receivedAt: number;
      readonly receiptId: string;
      readonly remoteAddress: string | null;
      readonly secretIndex: number | null;
    },
    digests: PayloadDigests,
  ): void;
  /** Appends a duplicate's receipt leaf (its seq is the tree's size). */
  appendReceipt(fields: Omit<ReceiptLeafFields, "seq">): void;
  /** Appends a retention record's leaf; `unique` makes its id (`ret_<unique>/…`). */
  appendRetention(unique: string, fields: Omit<RetentionLeafFields, "seq">): void;
  finisher: TransactionFinisher;
}

/**
 * Prepares the append of events to the audit log. Runs inside the accept's transaction (the
 * group commit's), so a leaf commits with its event or not at all; SQLite's one writer orders
 * appends. The first append of a transaction reads the one tree row; each append inserts its leaf
 * and the subtrees it closes (no scan, no node read) and the tree row is written once, by the
 * finisher, just before the COMMIT: a group of 50 accepts reads and rewrites it once, not 50
 * times. The payload's digests come with the event (made on the caller's thread), so the writer
 * hashes only the ~100-byte leaf and the subtrees it closes. `finisher` must be registered with
 * the group commit (`group.addFinisher`), or appends never reach the tree row.
 *
 * @example
 * ```ts
 * const log = prepareAuditAppend(db);
 * group.addFinisher(log.finisher);
 * log.append(eventId, { source, dedupKey, receivedAt, receiptId, remoteAddress, secretIndex }, payloadDigests(body, headers));
 * ```
 */
export function prepareAuditAppend(db: Database.Database): AuditAppender {
  const tree = db.prepare<[], { size: number; frontier: Buffer }>(
    "SELECT size, frontier FROM audit_tree WHERE id = 1",
  );
  const insertLeaf = db.prepare("INSERT INTO audit_leaves (seq, event_id, hash) VALUES (?, ?, ?)");
  const insertNode = db.prepare("INSERT INTO audit_nodes (level, idx, hash) VALUES (?, ?, ?)");
  const updateTree = db.prepare("UPDATE audit_tree SET size = ?, frontier = ? WHERE id = 1");
  /** The tree as this transaction's appends left it; null until its first append. */
  let open: CompactRange | null = null;
  const tip = (): CompactRange => {
    if (!open) {
      const row = tree.get();
      if (!row) throw new Error("audit_tree row is missing");
      open = decodeRange(row.size, row.frontier);
    }
    return open;
  };
  const appendHash = (id: string, hash: Buffer) => {
    const at = tip();
    const { range, closed } = appendToRange(at, hash);
    insertLeaf.run(at.size, id, hash);
    for (const node of closed) insertNode.run(node.level, node.index, node.hash);
    open = range;
  };
  return {
    append(eventId, event, digests) {
      const hash = firstReceiptLeafHashOf({
        seq: tip().size,
        source: event.source,
        dedupKey: event.dedupKey,
        receivedAt: event.receivedAt,
        receiptId: event.receiptId,
        remoteAddress: event.remoteAddress,
        secretIndex: event.secretIndex,
        ...digests,
      });
      appendHash(eventId, hash);
    },
    appendReceipt(fields) {
      appendHash(fields.receiptId, receiptLeafHashOf({ seq: tip().size, ...fields }));
    },
    appendRetention(unique, fields) {
      const id = retentionLeafId(unique, fields);
      appendHash(id, retentionLeafHashOf({ seq: tip().size, ...fields }));
    },
    finisher: {
      beforeCommit() {
        if (open) updateTree.run(open.size, encodeRange(open));
      },
      reset() {
        open = null;
      },
    },
  };
}
