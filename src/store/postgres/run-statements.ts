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
  const resultOf = (result: pg.QueryResult) => ({
    rows: result.rows as unknown[],
    rowCount: result.rowCount ?? 0,
  });
  const [only] = statements;
  if (statements.length === 1 && only) {
    return withRetry(async () => [resultOf(await pool.query(only.text, only.params))]);
  }
  return withRetry(() =>
    withTransaction(pool, async (client) => {
      const results: SqlResult<unknown>[] = [];
      for (const statement of statements) {
        results.push(resultOf(await client.query(statement.text, statement.params)));
      }
      return results;
    }),
  );
}
