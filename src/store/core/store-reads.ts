import { receiptIdFloor } from "../alert-fold.ts";
import {
  type LeafJoinRow,
  leafRecordOf,
  receiptLeafColumns,
  receiptLeafJoin,
} from "../audit-rows.ts";
import type { AuditStore, StoredTreeHead } from "../audit-types.ts";
import type { QueueStore } from "../queue-types.ts";
import type { RetentionStore } from "../retention-types.ts";
import { indexedBy, type ReadDriver, rowsOf as rowsOn, startsWith } from "./read-driver.ts";
import { inList, listValue } from "./sql-template.ts";

/** The AuditStore methods core implements (drivers leave them out). */
export type CoreAuditReads =
  | "auditTree"
  | "auditLeafOf"
  | "auditUnloggedEvents"
  | "latestTreeHead"
  | "treeHeadOfSize"
  | "treeHeadsSignedBy"
  | "auditLeafPage"
  | "auditRetentionLeaves";

/** The queue and alert reads core implements (drivers leave them out). */
export type CoreQueueReads = "nextDueAt" | "countDue" | "latestAlertKind" | "receiptCounts";

/** An audit_heads row: PostgreSQL returns its bigint columns as text. */
interface HeadRow {
  size: number | string;
  root: Buffer;
  signed_at: number | string;
  public_key: string;
  signature: Buffer;
}

const toHead = (row: HeadRow): StoredTreeHead => ({
  size: Number(row.size),
  root: row.root,
  signedAt: Number(row.signed_at),
  publicKey: row.public_key,
  signature: row.signature,
});

/**
 * The Store reads implemented once, in core, over a driver's `rows` primitive: the audit log's
 * tree, its leaf of an event, the events it lacks and its signed heads, retention's expiry mark,
 * the queue's next due time and due count, and the alerts' latest kind and receipt counts.
 *
 * @example
 * ```ts
 * const reads = coreReads({ dialect: "sqlite", table: (name) => name, rows: async (s) => db.prepare(s.text).all(...s.params) });
 * await reads.latestTreeHead();
 * ```
 */
export function coreReads(
  driver: ReadDriver,
): Pick<AuditStore, CoreAuditReads> &
  Pick<RetentionStore, "eventsExpiredBefore"> &
  Pick<QueueStore, CoreQueueReads> {
  const heads = driver.table("audit_heads");
  const deliveries = driver.table("deliveries");
  const rowsOf = <Row>(text: string, params: unknown[] = []) => rowsOn<Row>(driver, text, params);
  const read = (text: string, params: unknown[] = []) => rowsOf<HeadRow>(text, params);
  return {
    async auditTree() {
      const [row] = await rowsOf<{ size: number | string; frontier: Buffer }>(
        `SELECT size, frontier FROM ${driver.table("audit_tree")} WHERE id = 1`,
      );
      return { size: Number(row?.size ?? 0), frontier: row?.frontier ?? Buffer.alloc(0) };
    },
    async auditLeafOf(eventId) {
      const [row] = await rowsOf<{ seq: number | string; hash: Buffer }>(
        `SELECT seq, hash FROM ${driver.table("audit_leaves")} WHERE event_id = ?`,
        [eventId],
      );
      return row ? { seq: Number(row.seq), hash: row.hash } : null;
    },
    async auditUnloggedEvents(afterId, limit) {
      const rows = await rowsOf<{ id: string }>(
        `SELECT e.id FROM ${driver.table("events")} e
         WHERE e.id > ? AND NOT EXISTS (SELECT 1 FROM ${driver.table("audit_leaves")} l WHERE l.event_id = e.id)
         ORDER BY e.id LIMIT ?`,
        [afterId, limit],
      );
      return rows.map((r) => r.id);
    },
    async eventsExpiredBefore() {
      const [row] = await rowsOf<{ value: string }>(
        `SELECT value FROM ${driver.table("retention_marks")} WHERE name = 'events_before'`,
      );
      return row?.value ?? "";
    },
    async latestTreeHead() {
      const [row] = await read(`SELECT * FROM ${heads} ORDER BY size DESC, signed_at DESC LIMIT 1`);
      return row ? toHead(row) : null;
    },
    async treeHeadOfSize(size) {
      const [row] = await read(
        `SELECT * FROM ${heads} WHERE size = ? ORDER BY signed_at DESC LIMIT 1`,
        [size],
      );
      return row ? toHead(row) : null;
    },
    async nextDueAt() {
      const [row] = await rowsOf<{ at: number | string | null }>(
        `SELECT min(run_at) AS at FROM ${deliveries}${indexedBy(driver.dialect, "deliveries_due")}
         WHERE status = 'pending'`,
      );
      return row?.at == null ? null : Number(row.at);
    },
    async countDue({ now, eventIds }) {
      const at = Math.floor(now);
      const [row] =
        eventIds === undefined
          ? await rowsOf<{ n: number | string }>(
              `SELECT count(*) AS n FROM ${deliveries}${indexedBy(driver.dialect, "deliveries_due")}
               WHERE status = 'pending' AND run_at <= ?`,
              [at],
            )
          : await rowsOf<{ n: number | string }>(
              `SELECT count(*) AS n FROM ${deliveries}${indexedBy(driver.dialect, "deliveries_event")}
               WHERE ${inList(driver.dialect, "event_id")} AND status = 'pending' AND run_at <= ?`,
              [listValue(driver.dialect, eventIds), at],
            );
      return Number(row?.n ?? 0);
    },
    async latestAlertKind(prefix) {
      const [row] = await rowsOf<{ kind: string }>(
        `SELECT kind FROM ${driver.table("alert_outbox")}
         WHERE substr(condition, 1, length(?)) = ? ORDER BY last_at DESC, id DESC LIMIT 1`,
        [prefix, prefix],
      );
      return row?.kind ?? null;
    },
    async receiptCounts(since) {
      const [row] = await rowsOf<{ receipts: number | string; duplicates: number | string | null }>(
        `SELECT count(*) AS receipts, sum(CASE WHEN duplicate THEN 1 ELSE 0 END) AS duplicates
         FROM ${driver.table("receipts")}
         WHERE id >= ? AND received_at >= ? AND event_id IS NOT NULL`,
        [receiptIdFloor(since), Math.floor(since)],
      );
      return { receipts: Number(row?.receipts ?? 0), duplicates: Number(row?.duplicates ?? 0) };
    },
    async auditLeafPage(afterSeq, limit) {
      const rows = await rowsOf<LeafJoinRow & { headers: Array<[string, string]> | string | null }>(
        `SELECT l.seq, l.event_id, l.hash, e.source, e.dedup_key, e.received_at, e.body, e.headers,
                e.purged_at, e.body_sha256, e.headers_sha256, e.type, e.ordering_key,
                e.occurred_at, e.version, ${receiptLeafColumns}
         FROM ${driver.table("audit_leaves")} l LEFT JOIN ${driver.table("events")} e ON e.id = l.event_id
         ${receiptLeafJoin(driver.table("receipts"), driver.table("events"), driver.table("retention_marks"))}
         WHERE l.seq > ? ORDER BY l.seq LIMIT ?`,
        [afterSeq, limit],
      );
      // SQLite keeps headers as JSON text, PostgreSQL as jsonb (parsed by the driver).
      return rows.map((r) =>
        leafRecordOf(
          r,
          typeof r.headers === "string"
            ? (JSON.parse(r.headers) as Array<[string, string]>)
            : r.headers,
        ),
      );
    },
    async auditRetentionLeaves() {
      const rows = await rowsOf<{ seq: number | string; event_id: string }>(
        `SELECT seq, event_id FROM ${driver.table("audit_leaves")}
         WHERE ${startsWith(driver.dialect, "event_id", "ret_")} ORDER BY seq`,
      );
      return rows.map((r) => ({ seq: Number(r.seq), eventId: r.event_id }));
    },
    async treeHeadsSignedBy(at, limit) {
      const rows = await read(
        `SELECT * FROM ${heads} WHERE signed_at <= ? ORDER BY size DESC, signed_at DESC LIMIT ?`,
        [Math.floor(at), limit],
      );
      return rows.map(toHead);
    },
  };
}
