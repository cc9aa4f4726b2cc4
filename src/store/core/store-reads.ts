import type { AuditStore, StoredTreeHead } from "../audit-types.ts";
import type { RetentionStore } from "../retention-types.ts";
import { placeholder, type SqlDialect, type SqlStatement } from "./sql-template.ts";

/** The tables core's own reads name (PostgreSQL qualifies them with its schema). */
export type CoreTable =
  | "audit_heads"
  | "audit_tree"
  | "audit_leaves"
  | "retention_marks"
  | "events";

/**
 * What a driver gives core to implement Store reads once: its dialect, its table names, and one
 * primitive that runs a read statement. Each driver's primitive refuses work once the store is
 * closed and maps failures as its other reads do.
 */
export interface ReadDriver {
  readonly dialect: SqlDialect;
  table(name: CoreTable): string;
  rows<Row>(statement: SqlStatement): Promise<Row[]>;
}

/** The AuditStore methods core implements (drivers leave them out). */
export type CoreAuditReads =
  | "auditTree"
  | "auditLeafOf"
  | "auditUnloggedEvents"
  | "latestTreeHead"
  | "treeHeadOfSize"
  | "treeHeadsSignedBy";

/**
 * A statement written with `?` placeholders, as `dialect` binds them (`$1, $2, …` on
 * PostgreSQL). The text must hold no `?` other than placeholders.
 *
 * @example
 * ```ts
 * bindText("postgres", "SELECT * FROM t WHERE a = ? AND b = ?", [1, 2]).text; // "… a = $1 AND b = $2"
 * ```
 */
export function bindText(dialect: SqlDialect, text: string, params: unknown[]): SqlStatement {
  let n = 0;
  return { text: text.replace(/\?/g, () => placeholder(dialect, ++n)), params };
}

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
 * tree, its leaf of an event, the events it lacks and its signed heads, and retention's expiry
 * mark.
 *
 * @example
 * ```ts
 * const reads = coreReads({ dialect: "sqlite", table: (name) => name, rows: async (s) => db.prepare(s.text).all(...s.params) });
 * await reads.latestTreeHead();
 * ```
 */
export function coreReads(
  driver: ReadDriver,
): Pick<AuditStore, CoreAuditReads> & Pick<RetentionStore, "eventsExpiredBefore"> {
  const heads = driver.table("audit_heads");
  const rowsOf = <Row>(text: string, params: unknown[] = []) =>
    driver.rows<Row>(bindText(driver.dialect, text, params));
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
    async treeHeadsSignedBy(at, limit) {
      const rows = await read(
        `SELECT * FROM ${heads} WHERE signed_at <= ? ORDER BY size DESC, signed_at DESC LIMIT ?`,
        [Math.floor(at), limit],
      );
      return rows.map(toHead);
    },
  };
}
