import type Database from "better-sqlite3";
import type { SqlResult, SqlStatement } from "../core/sql-template.ts";

/**
 * Prepares the write primitive core's Store writes run on (core/write-driver.ts): statements
 * core wrote, run in order inside the caller's (group) transaction, each prepared once per text.
 * A statement that returns rows answers them (`rowCount`: how many); another answers the rows it
 * changed.
 *
 * @example
 * ```ts
 * const run = prepareRunStatements(db);
 * run([{ text: "UPDATE destinations SET failures = 0 WHERE name = ?", params: ["app"] }]);
 * ```
 */
export function prepareRunStatements(db: Database.Database) {
  const prepared = new Map<string, Database.Statement>();
  return (statements: readonly SqlStatement[]): SqlResult<unknown>[] =>
    statements.map((statement) => {
      let query = prepared.get(statement.text);
      if (!query) {
        query = db.prepare(statement.text);
        prepared.set(statement.text, query);
      }
      if (query.reader) {
        const rows = query.all(...statement.params) as unknown[];
        return { rows, rowCount: rows.length };
      }
      return { rows: [], rowCount: query.run(...statement.params).changes };
    });
}
