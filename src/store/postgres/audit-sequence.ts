import type pg from "pg";
import {
  appendToRange,
  type ClosedSubtree,
  decodeRange,
  encodeRange,
} from "../../audit/compact-range.ts";
import { writeInt64 } from "../../audit/leaf.ts";
import { sha256 } from "../../audit/sha256.ts";
import { byteaArrayParam } from "./binary-array.ts";
import { withRetry, withTransaction } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

interface PendingRow {
  n: string;
  leaf_id: string;
  prefix: Buffer;
  rest: Buffer;
}

/** A leaf's sequence number as its encoding holds it (leaf.ts's writeInt64: 8 bytes, big-endian). */
const seqBytes = (seq: number) => {
  const bytes = Buffer.alloc(8);
  writeInt64(bytes, 0, seq);
  return bytes;
};

// Takes the oldest pending leaves out of the queue. Runs after the tree row is locked, so (read
// committed) it sees every leaf a sequencer that held the lock before moved.
const takePendingSql = (t: SchemaNames) => `
  DELETE FROM ${t.audit_pending} p
  USING (SELECT n FROM ${t.audit_pending} ORDER BY n LIMIT $1) AS oldest
  WHERE p.n = oldest.n
  RETURNING p.n, p.leaf_id, p.prefix, p.rest`;

// The numbered leaves, the subtrees they closed and the new right edge, in one statement.
const extendTreeSql = (t: SchemaNames) => `
  WITH leaves AS (
    INSERT INTO ${t.audit_leaves} (seq, event_id, hash)
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::bytea[])
  ), nodes AS (
    INSERT INTO ${t.audit_nodes} (level, idx, hash)
    SELECT * FROM unnest($4::smallint[], $5::bigint[], $6::bytea[])
  )
  UPDATE ${t.audit_tree} SET size = $7, frontier = $8 WHERE id = 1`;

/**
 * Sequences up to `limit` pending leaves (audit_pending, migration 014) in one transaction: locks
 * the tree row, takes the oldest pending leaves in queue order, numbers them from the tree's size,
 * hashes each as SHA-256(prefix || seq as 8 bytes big-endian || rest) (what migration 012's
 * append did inside PostgreSQL), extends the compact range (src/audit/compact-range.ts), stores
 * the leaves and every subtree they close, and deletes them from pending. Safe to run from any
 * number of processes at once (they queue on the row lock); the sequencer lease only keeps them
 * from competing. Returns how many leaves it sequenced.
 *
 * @example
 * ```ts
 * while ((await sequenceAuditPostgres(pool, t, 5_000)) === 5_000) {}
 * ```
 */
export async function sequenceAuditPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  limit: number,
): Promise<number> {
  return withRetry(() =>
    withTransaction(pool, async (client) => {
      const tree = await client.query<{ size: string; frontier: Buffer }>(
        `SELECT size, frontier FROM ${t.audit_tree} WHERE id = 1 FOR UPDATE`,
      );
      const row = tree.rows[0];
      if (!row) throw new Error("audit_tree row is missing");
      const pending = (await client.query<PendingRow>(takePendingSql(t), [limit])).rows;
      if (pending.length === 0) return 0;
      pending.sort((a, b) => Number(a.n) - Number(b.n));
      let range = decodeRange(Number(row.size), row.frontier);
      const seqs: number[] = [];
      const hashes: Buffer[] = [];
      const closed: ClosedSubtree[] = [];
      for (const leaf of pending) {
        const seq = range.size;
        const hash = sha256(Buffer.concat([leaf.prefix, seqBytes(seq), leaf.rest]));
        const appended = appendToRange(range, hash);
        range = appended.range;
        seqs.push(seq);
        hashes.push(hash);
        closed.push(...appended.closed);
      }
      await client.query(extendTreeSql(t), [
        seqs,
        pending.map((p) => p.leaf_id),
        byteaArrayParam(hashes),
        closed.map((c) => c.level),
        closed.map((c) => c.index),
        byteaArrayParam(closed.map((c) => c.hash)),
        range.size,
        encodeRange(range),
      ]);
      return pending.length;
    }),
  );
}

/**
 * How many leaves wait in audit_pending.
 *
 * @example
 * ```ts
 * const waiting = await pendingAuditCountPostgres(pool, t);
 * ```
 */
export async function pendingAuditCountPostgres(pool: pg.Pool, t: SchemaNames): Promise<number> {
  const { rows } = await withRetry(() =>
    pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${t.audit_pending}`),
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Whether a leaf (an event's id, or a duplicate receipt's) waits in audit_pending, accepted but
 * not sequenced yet. A scan: audit_pending has no index on the id, and the sequencer keeps it to
 * about a merge delay's accepts.
 *
 * @example
 * ```ts
 * if (await auditLeafPendingPostgres(pool, t, "evt_…")) throw hookinboxError("HOOKINBOX_AUDIT_LEAF_PENDING");
 * ```
 */
export async function auditLeafPendingPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  leafId: string,
): Promise<boolean> {
  const { rows } = await withRetry(() =>
    pool.query(`SELECT 1 FROM ${t.audit_pending} WHERE leaf_id = $1 LIMIT 1`, [leafId]),
  );
  return rows.length > 0;
}

/**
 * Takes or renews the sequencer lease for `holder` for `ttlMs` (PostgreSQL's clock, so the
 * processes' clocks do not matter): true when `holder` holds it now, false while another holder's
 * lease runs. With `ttlMs` 0 a holder gives its lease up (false).
 *
 * @example
 * ```ts
 * if (await auditSequencerLeasePostgres(pool, t, "gateway-1", 5_000)) await sequence();
 * ```
 */
export async function auditSequencerLeasePostgres(
  pool: pg.Pool,
  t: SchemaNames,
  holder: string,
  ttlMs: number,
): Promise<boolean> {
  const now = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";
  const { rows } = await withRetry(() =>
    ttlMs <= 0
      ? pool.query(
          `UPDATE ${t.audit_sequencer} SET holder = NULL, expires_at = 0 WHERE id = 1 AND holder = $1`,
          [holder],
        )
      : pool.query(
          `UPDATE ${t.audit_sequencer} SET holder = $1, expires_at = ${now} + $2
           WHERE id = 1 AND (holder = $1 OR holder IS NULL OR expires_at < ${now})
           RETURNING holder`,
          [holder, Math.ceil(ttlMs)],
        ),
  );
  return ttlMs > 0 && rows.length > 0;
}
