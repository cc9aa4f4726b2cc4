import type { AuditStore, StoredTreeHead } from "../audit-types.ts";
import type { SqlDialect, SqlStatement } from "./sql-template.ts";

/** The tables core's own reads name (PostgreSQL qualifies them with its schema). */
export type CoreTable = "audit_heads";

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
  if (dialect === "sqlite") return { text, params };
  let n = 0;
  return { text: text.replace(/\?/g, () => `$${++n}`), params };
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
 * The Store reads implemented once, in core, over a driver's `rows` primitive: the signed tree
 * heads of the audit log.
 *
 * @example
 * ```ts
 * const reads = coreReads({ dialect: "sqlite", table: (name) => name, rows: async (s) => db.prepare(s.text).all(...s.params) });
 * await reads.latestTreeHead();
 * ```
 */
export function coreReads(
  driver: ReadDriver,
): Pick<AuditStore, "latestTreeHead" | "treeHeadOfSize" | "treeHeadsSignedBy"> {
  const heads = driver.table("audit_heads");
  const read = (text: string, params: unknown[] = []) =>
    driver.rows<HeadRow>(bindText(driver.dialect, text, params));
  return {
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
