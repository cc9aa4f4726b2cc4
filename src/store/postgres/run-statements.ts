import type pg from "pg";
import type { SqlResult, SqlStatement } from "../core/sql-template.ts";
import { withRetry, withTransaction } from "./connection.ts";

/**
 * The write primitive core's Store writes run on (core/write-driver.ts): one statement alone on
 * the pool, several in order between BEGIN and COMMIT on one connection; retried as a whole on
 * a transient failure (a failed transaction rolled back, so nothing of it stands).
 *
 * @example
 * ```ts
 * const [result] = await runStatementsPostgres(pool, [{ text: "UPDATE … WHERE id = $1", params: ["x"] }]);
 * ```
 */
export function runStatementsPostgres(
  pool: pg.Pool,
  statements: readonly SqlStatement[],
): Promise<SqlResult<unknown>[]> {
  const [only] = statements;
  if (statements.length === 1 && only) {
    return withRetry(async () => [resultOf(await pool.query(only.text, only.params))]);
  }
  return withRetry(() => withTransaction(pool, (client) => runOnClient(client, statements)));
}

/** A pg result as core reads it: its rows and how many rows it touched. */
function resultOf(result: pg.QueryResult): SqlResult<unknown> {
  return { rows: result.rows as unknown[], rowCount: result.rowCount ?? 0 };
}

/**
 * Runs `statements` in order on one client (inside the caller's transaction), answering each
 * one's rows and row count; `bind` maps each parameter as pg should send it.
 *
 * @example
 * ```ts
 * const results = await withTransaction(pool, (client) => runOnClient(client, statements));
 * ```
 */
export async function runOnClient(
  client: pg.ClientBase,
  statements: readonly SqlStatement[],
  bind: (value: unknown) => unknown = (value) => value,
): Promise<SqlResult<unknown>[]> {
  const results: SqlResult<unknown>[] = [];
  for (const { text, params } of statements) {
    results.push(resultOf(await client.query(text, params.map(bind))));
  }
  return results;
}
