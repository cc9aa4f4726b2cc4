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
  const prepare = statementCache(db);
  return (statements: readonly SqlStatement[]): SqlResult<unknown>[] =>
    statements.map((statement) => {
      const query = prepare(statement.text);
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

/**
 * Prepares the read primitive core's Store reads run on (core/store-reads.ts): a statement,
 * prepared once per text on the reading connection, and its rows.
 *
 * @example
 * ```ts
 * const rows = prepareRows(db);
 * rows({ text: "SELECT id FROM events WHERE source = ?", params: ["stripe"] });
 * ```
 */
export function prepareRows(db: Database.Database) {
  const prepare = statementCache(db);
  return <Row>(statement: SqlStatement): Row[] =>
    prepare(statement.text).all(...statement.params) as Row[];
}

/** `db.prepare`, once per statement text for the life of the connection. */
function statementCache(db: Database.Database): (text: string) => Database.Statement {
  const prepared = new Map<string, Database.Statement>();
  return (text) => {
    let query = prepared.get(text);
    if (!query) {
      query = db.prepare(text);
      prepared.set(text, query);
    }
    return query;
  };
}
