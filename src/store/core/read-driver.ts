import { placeholder, type SqlDialect, type SqlStatement } from "./sql-template.ts";

/** The tables core's own reads name (PostgreSQL qualifies them with its schema). */
export type CoreTable =
  | "hookinbox_heartbeat"
  | "audit_heads"
  | "audit_tree"
  | "audit_leaves"
  | "audit_nodes"
  | "audit_pending"
  | "audit_sequencer"
  | "retention_marks"
  | "events"
  | "event_dedup"
  | "deliveries"
  | "attempts"
  | "applied_versions"
  | "effects"
  | "destinations"
  | "receipts"
  | "receipts_accepted"
  | "receipts_rejected"
  | "alert_outbox";

/**
 * What a driver gives core to implement Store reads once: its dialect, its table names, and one
 * primitive that runs a read statement and answers its rows (PostgreSQL's int8 as numbers, as
 * its pool reads them). Core decides every read's statement and what its rows mean; the driver
 * only runs it, mapping failures as its other work does.
 *
 * @example
 * ```ts
 * const driver: ReadDriver = {
 *   dialect: "sqlite",
 *   table: (name) => name,
 *   rows: async (s) => db.prepare(s.text).all(...s.params),
 * };
 * ```
 */
export interface ReadDriver {
  readonly dialect: SqlDialect;
  table(name: CoreTable): string;
  rows<Row>(statement: SqlStatement): Promise<Row[]>;
}

/**
 * An index the statement must use on SQLite, whose planner may otherwise scan a table with a
 * less selective one (PostgreSQL plans from its statistics: nothing is added there).
 *
 * @example
 * ```ts
 * `SELECT count(*) FROM deliveries${indexedBy("sqlite", "deliveries_due")} WHERE …`;
 * ```
 */
export function indexedBy(dialect: SqlDialect, index: string): string {
  return dialect === "sqlite" ? ` INDEXED BY ${index}` : "";
}

/**
 * `column` starts with `prefix` (letters, digits and `_` only): a range over the column's index
 * on SQLite, whose byte order makes the range exact; `starts_with` on PostgreSQL, where a
 * collation may order `_` and the next byte otherwise.
 *
 * @example
 * ```ts
 * startsWith("sqlite", "event_id", "ret_"); // "event_id >= 'ret_' AND event_id < 'ret`'"
 * ```
 */
export function startsWith(dialect: SqlDialect, column: string, prefix: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(prefix)) throw new Error(`startsWith: unsafe prefix ${prefix}`);
  if (dialect === "postgres") return `starts_with(${column}, '${prefix}')`;
  const next = `${prefix.slice(0, -1)}${String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)}`;
  return `${column} >= '${prefix}' AND ${column} < '${next}'`;
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
  let n = 0;
  return { text: text.replace(/\?/g, () => placeholder(dialect, ++n)), params };
}

/**
 * The rows of a statement written with `?` placeholders, run on `driver`.
 *
 * @example
 * ```ts
 * const [row] = await rowsOf<{ n: number }>(driver, "SELECT count(*) AS n FROM t WHERE a = ?", [1]);
 * ```
 */
export function rowsOf<Row>(driver: ReadDriver, text: string, params: unknown[] = []) {
  return driver.rows<Row>(bindText(driver.dialect, text, params));
}
