import {
  appendToRange,
  type ClosedSubtree,
  decodeRange,
  encodeRange,
} from "../../audit/compact-range.ts";
import { writeInt64 } from "../../audit/leaf.ts";
import { type SubtreeId, subtreeKey } from "../../audit/merkle.ts";
import { sha256 } from "../../audit/sha256.ts";
import type { AuditStore } from "../audit-types.ts";
import { type ReadDriver, rowsOf } from "./read-driver.ts";
import { executeText, type WriteDriver } from "./write-driver.ts";

/** The AuditStore methods core implements over an {@link AuditDriver} (drivers leave them out). */
export type CoreAuditWrites =
  | "auditSubtrees"
  | "auditSequence"
  | "auditPendingCount"
  | "auditLeafPending"
  | "auditSequencerLease";

/**
 * What a driver gives core to implement the audit log's subtree reads and its sequencing once:
 * its read and write primitives and how its accepts append. `appends: "inline"` (SQLite): the one
 * writer appends each leaf inside the accept's own transaction, so nothing is ever pending and
 * there is nothing to sequence. `appends: "queued"` (PostgreSQL): accepts queue their leaves in
 * audit_pending, and a sequencer numbers them later in one transaction of `transaction`, a
 * primitive that runs core's statements, interleaved with core's hashing, between BEGIN and
 * COMMIT (retried as a whole on a transient failure). A list of Buffers bound as one parameter
 * goes as a bytea[].
 *
 * @example
 * ```ts
 * const driver: AuditDriver = { dialect: "sqlite", table: (n) => n, rows, execute, appends: "inline" };
 * ```
 */
export type AuditDriver = ReadDriver &
  WriteDriver &
  (
    | { readonly appends: "inline" }
    | {
        readonly appends: "queued";
        transaction<T>(work: (tx: WriteDriver) => Promise<T>): Promise<T>;
      }
  );

/** A leaf's sequence number as its encoding holds it (leaf.ts's writeInt64: 8 bytes, big-endian). */
const seqBytes = (seq: number) => {
  const bytes = Buffer.alloc(8);
  writeInt64(bytes, 0, seq);
  return bytes;
};

/**
 * The subtrees' hashes by id, leaves and nodes in one statement, each a primary-key probe: the
 * leaves' seqs bound as one list, the nodes' (level, idx) as two arrays on PostgreSQL and as one
 * JSON list of pairs on SQLite (CROSS JOIN keeps SQLite's planner probing nodes by the pairs).
 */
function subtreesStatement(driver: ReadDriver, ids: readonly SubtreeId[]): [string, unknown[]] {
  const leaves = ids.filter((id) => id.level === 0).map((id) => id.index);
  const nodes = ids.filter((id) => id.level > 0);
  const [leafTable, nodeTable] = [driver.table("audit_leaves"), driver.table("audit_nodes")];
  if (driver.dialect === "postgres") {
    return [
      `SELECT 0::int AS level, seq AS idx, hash FROM ${leafTable} WHERE seq = ANY(?::bigint[])
       UNION ALL
       SELECT n.level, n.idx, n.hash FROM ${nodeTable} n
       JOIN unnest(?::smallint[], ?::bigint[]) AS w (level, idx) ON n.level = w.level AND n.idx = w.idx`,
      [leaves, nodes.map((n) => n.level), nodes.map((n) => n.index)],
    ];
  }
  return [
    `SELECT 0 AS level, seq AS idx, hash FROM ${leafTable} WHERE seq IN (SELECT value FROM json_each(?))
     UNION ALL
     SELECT n.level, n.idx, n.hash FROM json_each(?) w
     CROSS JOIN ${nodeTable} n ON n.level = w.value ->> 0 AND n.idx = w.value ->> 1`,
    [JSON.stringify(leaves), JSON.stringify(nodes.map((n) => [n.level, n.index]))],
  ];
}

/** PostgreSQL's clock in ms, so that the processes' own clocks do not matter to the lease. */
const dbNowMs = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/**
 * The audit log's subtree reads and its sequencing, once for both stores: the hashes of perfect
 * subtrees (a head or proof needs O(log² n) of them) in one statement; and where accepts queue
 * their leaves (`appends: "queued"`), the sequencer's batch (the tree row locked, the oldest
 * pending leaves taken in queue order, numbered from the tree's size, hashed as SHA-256(prefix ||
 * seq as 8 bytes big-endian || rest), the compact range extended, leaves and closed subtrees
 * stored, in one transaction), the pending count and probe, and the sequencer lease on the
 * database's clock. Where the one writer appends inline nothing is pending: 0, false, false.
 *
 * @example
 * ```ts
 * const audit = auditWrites(driver);
 * while ((await audit.auditSequence(5_000)) === 5_000) {}
 * ```
 */
export function auditWrites(driver: AuditDriver): Pick<AuditStore, CoreAuditWrites> {
  const subtrees: AuditStore["auditSubtrees"] = async (ids) => {
    const [text, params] = subtreesStatement(driver, ids);
    const rows = await rowsOf<{ level: number; idx: number | string; hash: Buffer }>(
      driver,
      text,
      params,
    );
    return new Map(
      rows.map((r) => [subtreeKey({ level: Number(r.level), index: Number(r.idx) }), r.hash]),
    );
  };
  if (driver.appends === "inline") {
    return {
      auditSubtrees: subtrees,
      auditSequence: async () => 0,
      auditPendingCount: async () => 0,
      auditLeafPending: async () => false,
      auditSequencerLease: async () => false,
    };
  }
  const tree = driver.table("audit_tree");
  const pending = driver.table("audit_pending");
  const sequencer = driver.table("audit_sequencer");
  return {
    auditSubtrees: subtrees,
    auditSequence: (limit) =>
      driver.transaction(async (tx) => {
        // The tree row is locked first, so (read committed) the take below sees every leaf a
        // sequencer that held the lock before moved.
        const [locked] = await executeText(tx, [
          [`SELECT size, frontier FROM ${tree} WHERE id = 1 FOR UPDATE`, []],
        ]);
        const row = locked?.rows[0] as { size: number | string; frontier: Buffer } | undefined;
        if (!row) throw new Error("audit_tree row is missing");
        const [taken] = await executeText(tx, [
          [
            `DELETE FROM ${pending} p
             USING (SELECT n FROM ${pending} ORDER BY n LIMIT ?) AS oldest
             WHERE p.n = oldest.n
             RETURNING p.n, p.leaf_id, p.prefix, p.rest`,
            [limit],
          ],
        ]);
        const leaves = (taken?.rows ?? []) as Array<{
          n: number | string;
          leaf_id: string;
          prefix: Buffer;
          rest: Buffer;
        }>;
        if (leaves.length === 0) return 0;
        leaves.sort((a, b) => Number(a.n) - Number(b.n));
        let range = decodeRange(Number(row.size), row.frontier);
        const seqs: number[] = [];
        const hashes: Buffer[] = [];
        const closed: ClosedSubtree[] = [];
        for (const leaf of leaves) {
          const seq = range.size;
          const hash = sha256(Buffer.concat([leaf.prefix, seqBytes(seq), leaf.rest]));
          const appended = appendToRange(range, hash);
          range = appended.range;
          seqs.push(seq);
          hashes.push(hash);
          closed.push(...appended.closed);
        }
        // The numbered leaves, the subtrees they closed and the new right edge, in one statement.
        await executeText(tx, [
          [
            `WITH leaves AS (
               INSERT INTO ${driver.table("audit_leaves")} (seq, event_id, hash)
               SELECT * FROM unnest(?::bigint[], ?::text[], ?::bytea[])
             ), nodes AS (
               INSERT INTO ${driver.table("audit_nodes")} (level, idx, hash)
               SELECT * FROM unnest(?::smallint[], ?::bigint[], ?::bytea[])
             )
             UPDATE ${tree} SET size = ?, frontier = ? WHERE id = 1`,
            [
              seqs,
              leaves.map((p) => p.leaf_id),
              hashes,
              closed.map((c) => c.level),
              closed.map((c) => c.index),
              closed.map((c) => c.hash),
              range.size,
              encodeRange(range),
            ],
          ],
        ]);
        return leaves.length;
      }),
    async auditPendingCount() {
      const [row] = await rowsOf<{ n: number | string }>(
        driver,
        `SELECT count(*) AS n FROM ${pending}`,
      );
      return Number(row?.n ?? 0);
    },
    // A scan: audit_pending has no index on the id, and the sequencer keeps it to about a merge
    // delay's accepts.
    async auditLeafPending(leafId) {
      const rows = await rowsOf(driver, `SELECT 1 FROM ${pending} WHERE leaf_id = ? LIMIT 1`, [
        leafId,
      ]);
      return rows.length > 0;
    },
    async auditSequencerLease(holder, ttlMs) {
      if (ttlMs <= 0) {
        await executeText(driver, [
          [
            `UPDATE ${sequencer} SET holder = NULL, expires_at = 0 WHERE id = 1 AND holder = ?`,
            [holder],
          ],
        ]);
        return false;
      }
      const [result] = await executeText(driver, [
        [
          `UPDATE ${sequencer} SET holder = ?, expires_at = ${dbNowMs} + ?
           WHERE id = 1 AND (holder = ? OR holder IS NULL OR expires_at < ${dbNowMs})
           RETURNING holder`,
          [holder, Math.ceil(ttlMs), holder],
        ],
      ]);
      return (result?.rowCount ?? 0) > 0;
    },
  };
}
