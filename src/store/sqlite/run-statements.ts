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
      // Bytes come from the writer thread as plain Uint8Arrays; better-sqlite3 binds Buffers.
      const params = statement.params.map((value) =>
        value instanceof Uint8Array && !Buffer.isBuffer(value)
          ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
          : value,
      );
      if (query.reader) {
        const rows = query.all(...params) as unknown[];
        return { rows, rowCount: rows.length };
      }
      return { rows: [], rowCount: query.run(...params).changes };
    });
}
