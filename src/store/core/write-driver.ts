import type { CoreTable } from "./read-driver.ts";
import { bindText } from "./read-driver.ts";
import type { SqlDialect, SqlResult, SqlStatement } from "./sql-template.ts";

/**
 * What a driver gives core to implement Store writes once: its dialect, its table names, and one
 * primitive that runs statements core wrote, in order, in one transaction (SQLite: inside its
 * group commit; PostgreSQL: one statement alone, several between BEGIN and COMMIT), answering
 * each one's rows and the number of rows it touched. Core decides every statement and what its
 * result means; the driver decides nothing.
 *
 * @example
 * ```ts
 * const [result] = await driver.execute([{ text: "UPDATE t SET a = ? WHERE id = ?", params: [1, "x"] }]);
 * result?.rowCount; // 1
 * ```
 */
export interface WriteDriver {
  readonly dialect: SqlDialect;
  table(name: CoreTable): string;
  execute(statements: readonly SqlStatement[]): Promise<SqlResult<unknown>[]>;
}

/**
 * Runs statements written with `?` placeholders on `driver`, in one transaction, and answers
 * each one's result.
 *
 * @example
 * ```ts
 * const [update] = await executeText(driver, [["UPDATE t SET a = ? WHERE id = ?", [1, "x"]]]);
 * ```
 */
export function executeText(
  driver: WriteDriver,
  statements: ReadonlyArray<readonly [text: string, params: unknown[]]>,
): Promise<SqlResult<Record<string, unknown>>[]> {
  return driver.execute(
    statements.map(([text, params]) => bindText(driver.dialect, text, params)),
  ) as Promise<SqlResult<Record<string, unknown>>[]>;
}

/**
 * The larger of two SQL expressions as `dialect` spells it: `max(a, b)` on SQLite (NULL when
 * either is), `GREATEST(a, b)` on PostgreSQL (NULLs ignored).
 *
 * @example
 * ```ts
 * greatestSql("postgres", "window_start", "?"); // "GREATEST(window_start, ?)"
 * ```
 */
export function greatestSql(dialect: SqlDialect, a: string, b: string): string {
  return dialect === "postgres" ? `GREATEST(${a}, ${b})` : `max(${a}, ${b})`;
}

/**
 * The rows of a list of texts bound at one `?` (bind it with `listValue`), one `value` each:
 * json_each on SQLite, unnest of a text[] on PostgreSQL.
 *
 * @example
 * ```ts
 * `INSERT INTO destinations (name) SELECT value FROM (${listRowsSql("sqlite")}) l WHERE true`;
 * ```
 */
export function listRowsSql(dialect: SqlDialect): string {
  return dialect === "postgres"
    ? "SELECT unnest(?::text[]) AS value"
    : "SELECT value FROM json_each(?)";
}

/**
 * Rows a claim's subquery picks are skipped by another process's claim under way: `FOR UPDATE
 * SKIP LOCKED` on PostgreSQL; nothing on SQLite, whose one writer claims alone.
 *
 * @example
 * ```ts
 * `SELECT id FROM alert_outbox WHERE due_at <= ? LIMIT ?${skipLockedSql("postgres")}`;
 * ```
 */
export function skipLockedSql(dialect: SqlDialect): string {
  return dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
}
