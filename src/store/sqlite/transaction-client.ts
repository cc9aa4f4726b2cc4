import type Database from "better-sqlite3";
import { sqlTag } from "../core/sql-template.ts";
import type { TransactionClient } from "../queue-types.ts";

/**
 * The `tx` a handler gets from `ctx.transaction` on SQLite: statements with `?` placeholders
 * (`tx.query`) or tagged templates (`tx.sql`) run on the store's own connection, inside the
 * transaction that completes the delivery.
 *
 * @example
 * ```ts
 * await ctx.transaction(async (tx) => {
 *   await tx.sql`INSERT INTO credits (order_id, amount) VALUES (${orderId}, ${amount})`;
 * });
 * ```
 */
export function createTransactionClient(db: Database.Database): TransactionClient {
  const query = async <Row>(sql: string, params: readonly unknown[] = []) => {
    const statement = db.prepare(sql);
    if (statement.reader) {
      const rows = statement.all(...params) as Row[];
      return { rows, rowCount: rows.length };
    }
    const result = statement.run(...params);
    return { rows: [] as Row[], rowCount: result.changes };
  };
  return { dialect: "sqlite", connection: db, query, sql: sqlTag("sqlite", query) };
}
