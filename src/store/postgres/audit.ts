import type pg from "pg";
import {
  appendToRange,
  type ClosedSubtree,
  decodeRange,
  encodeRange,
} from "../../audit/compact-range.ts";
import { encodeLeaf, leafFieldsOf, type StoredEventForLeaf } from "../../audit/leaf.ts";
import { leafHash, type SubtreeId, subtreeKey } from "../../audit/merkle.ts";
import { type LeafJoinRow, leafRecordOf } from "../audit-rows.ts";
import type { AuditStore, StoredTreeHead } from "../audit-types.ts";
import { withRetry } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

const writeSql = (t: SchemaNames) => `
  WITH leaves AS (
    INSERT INTO ${t.audit_leaves} (seq, event_id, hash)
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::bytea[])
  ), nodes AS (
    INSERT INTO ${t.audit_nodes} (level, idx, hash)
    SELECT * FROM unnest($4::smallint[], $5::bigint[], $6::bytea[])
  )
  UPDATE ${t.audit_tree} SET size = $7, frontier = $8 WHERE id = 1`;

/** A new event to append to the audit log: its id and the fields its leaf commits to. */
export interface NewAuditLeaf {
  readonly eventId: string;
  readonly event: StoredEventForLeaf;
}

/**
 * Appends new events to the audit log, in the given order, at the end of their accept
 * transaction, on `client` (inside BEGIN … COMMIT). The tree row is locked FOR UPDATE only from
 * here to the commit, so concurrent accepts in every gateway process append one after another in
 * commit order: one tree, no gaps, no forks. Two round trips however many leaves: lock-and-read,
 * then one write statement; a batch of accepts (accept-batch.ts) takes the lock once.
 *
 * @example
 * ```ts
 * await appendAuditLeavesPostgres(client, t, [{ eventId, event: { source, dedupKey, receivedAt, body, headers } }]);
 * ```
 */
export async function appendAuditLeavesPostgres(
  client: pg.PoolClient,
  t: SchemaNames,
  leaves: readonly NewAuditLeaf[],
): Promise<void> {
  if (leaves.length === 0) return;
  const { rows } = await client.query<{ size: string; frontier: Buffer }>({
    name: "hookinbox_audit_lock",
    text: `SELECT size, frontier FROM ${t.audit_tree} WHERE id = 1 FOR UPDATE`,
  });
  const row = rows[0];
  if (!row) throw new Error("audit_tree row is missing");
  let range = decodeRange(Number(row.size), row.frontier);
  const seqs: number[] = [];
  const hashes: Buffer[] = [];
  const closed: ClosedSubtree[] = [];
  for (const leaf of leaves) {
    const hash = leafHash(encodeLeaf(leafFieldsOf(range.size, leaf.event)));
    seqs.push(range.size);
    hashes.push(hash);
    const appended = appendToRange(range, hash);
    range = appended.range;
    closed.push(...appended.closed);
  }
  await client.query({
    name: "hookinbox_audit_append",
    text: writeSql(t),
    values: [
      seqs,
      leaves.map((l) => l.eventId),
      hashes,
      closed.map((n) => n.level),
      closed.map((n) => n.index),
      closed.map((n) => n.hash),
      range.size,
      encodeRange(range),
    ],
  });
}

interface HeadRow {
  size: string;
  root: Buffer;
  signed_at: string;
  public_key: string;
  signature: Buffer;
}

const toHead = (row: HeadRow | undefined): StoredTreeHead | null =>
  row
    ? {
        size: Number(row.size),
        root: row.root,
        signedAt: Number(row.signed_at),
        publicKey: row.public_key,
        signature: row.signature,
      }
    : null;

/**
 * The audit log's reads and head writes on PostgreSQL (see AuditStore), on a pool or on one
 * client (a client inside a transaction sees that transaction's rows).
 *
 * @example
 * ```ts
 * const audit = auditPostgres(pool, schemaNames("hookinbox"));
 * const { size } = await audit.auditTree();
 * ```
 */
export function auditPostgres(pool: pg.Pool | pg.PoolClient, t: SchemaNames): AuditStore {
  const query = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
    withRetry(() => pool.query<R>(text, values)).then((r) => r.rows);
  return {
    async auditTree() {
      const rows = await query<{ size: string; frontier: Buffer }>(
        `SELECT size, frontier FROM ${t.audit_tree} WHERE id = 1`,
      );
      return { size: Number(rows[0]?.size ?? 0), frontier: rows[0]?.frontier ?? Buffer.alloc(0) };
    },
    async auditSubtrees(ids: readonly SubtreeId[]) {
      const leaves = ids.filter((id) => id.level === 0).map((id) => id.index);
      const nodes = ids.filter((id) => id.level > 0);
      const rows = await query<{ level: number; idx: string; hash: Buffer }>(
        `SELECT 0::int AS level, seq AS idx, hash FROM ${t.audit_leaves} WHERE seq = ANY($1::bigint[])
         UNION ALL
         SELECT n.level, n.idx, n.hash FROM ${t.audit_nodes} n
         JOIN unnest($2::smallint[], $3::bigint[]) AS w (level, idx) ON n.level = w.level AND n.idx = w.idx`,
        [leaves, nodes.map((n) => n.level), nodes.map((n) => n.index)],
      );
      return new Map(
        rows.map((r) => [subtreeKey({ level: r.level, index: Number(r.idx) }), r.hash]),
      );
    },
    async auditLeafOf(eventId) {
      const rows = await query<{ seq: string; hash: Buffer }>(
        `SELECT seq, hash FROM ${t.audit_leaves} WHERE event_id = $1`,
        [eventId],
      );
      return rows[0] ? { seq: Number(rows[0].seq), hash: rows[0].hash } : null;
    },
    async auditLeafPage(afterSeq, limit) {
      const rows = await query<LeafJoinRow & { headers: Array<[string, string]> | null }>(
        `SELECT l.seq, l.event_id, l.hash, e.source, e.dedup_key, e.received_at, e.body, e.headers,
                e.purged_at, e.body_sha256, e.headers_sha256
         FROM ${t.audit_leaves} l LEFT JOIN ${t.events} e ON e.id = l.event_id
         WHERE l.seq > $1 ORDER BY l.seq LIMIT $2`,
        [afterSeq, limit],
      );
      return rows.map((r) => leafRecordOf(r, r.headers));
    },
    async auditUnloggedEvents(afterId, limit) {
      const rows = await query<{ id: string }>(
        `SELECT e.id FROM ${t.events} e
         WHERE e.id > $1 AND NOT EXISTS (SELECT 1 FROM ${t.audit_leaves} l WHERE l.event_id = e.id)
         ORDER BY e.id LIMIT $2`,
        [afterId, limit],
      );
      return rows.map((r) => r.id);
    },
    async saveTreeHead(head) {
      await query(
        `INSERT INTO ${t.audit_heads} (size, root, signed_at, public_key, signature)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (size, signed_at) DO NOTHING`,
        [head.size, head.root, head.signedAt, head.publicKey, head.signature],
      );
    },
    async latestTreeHead() {
      const rows = await query<HeadRow>(
        `SELECT * FROM ${t.audit_heads} ORDER BY size DESC, signed_at DESC LIMIT 1`,
      );
      return toHead(rows[0]);
    },
    async treeHeadOfSize(size) {
      const rows = await query<HeadRow>(
        `SELECT * FROM ${t.audit_heads} WHERE size = $1 ORDER BY signed_at DESC LIMIT 1`,
        [size],
      );
      return toHead(rows[0]);
    },
    async treeHeadsSignedBy(at, limit) {
      const rows = await query<HeadRow>(
        `SELECT * FROM ${t.audit_heads} WHERE signed_at <= $1 ORDER BY size DESC, signed_at DESC LIMIT $2`,
        [Math.floor(at), limit],
      );
      return rows.map((r) => toHead(r)!);
    },
  };
}
