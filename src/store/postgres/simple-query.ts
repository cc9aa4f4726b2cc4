import pg from "pg";

/** A value `inlineSql` can write as an SQL literal. */
export type InlineValue = string | number | boolean | null | readonly (string | number)[];

const literal = (value: InlineValue): string => {
  if (value === null) return "NULL";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    // Only integers reach the queue's SQL (times in ms, attempts); anything else is a bug here,
    // never something to write into SQL text.
    if (!Number.isSafeInteger(value)) throw new TypeError(`not a safe integer: ${value}`);
    return String(value);
  }
  if (typeof value === "string") return pg.escapeLiteral(value);
  // Untyped: the statement's cast (or a prepared statement's parameter type) gives the type.
  if (value.length === 0) return "'{}'";
  return `ARRAY[${value.map(literal).join(", ")}]`;
};

/**
 * Writes `$1`, `$2`, … of one of hookinbox's own statements as literals, for the simple-query
 * protocol (which binds no parameters): strings through pg's `escapeLiteral`, numbers only as
 * safe integers, arrays as `ARRAY[…]` and an empty one as `'{}'` (the statement's own casts give
 * their type). The statement text must be hookinbox's: a `$n` inside a string literal or a
 * dollar-quoted body would be replaced too.
 *
 * @example
 * ```ts
 * inlineSql("SELECT $1::text, $2::bigint[]", ["it's", [1, 2]]); // "SELECT 'it''s'::text, ARRAY[1, 2]::bigint[]"
 * ```
 */
export function inlineSql(sql: string, values: readonly InlineValue[]): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const value = values[Number(n) - 1];
    if (value === undefined) throw new RangeError(`no value for $${n}`);
    return literal(value);
  });
}

/**
 * Sends several statements as ONE simple-query message and returns each one's result, in order.
 * Under READ COMMITTED each statement of the message still takes its own snapshot, so a
 * statement sees what was committed while an earlier one of the same message waited for a lock
 * (key-locks.ts, rule 3). An error skips the rest of the message (the caller's `withClient`
 * rolls back).
 *
 * @example
 * ```ts
 * const [, , changed] = await queryStatements(client, ["BEGIN", lockSql, changeSql, "COMMIT"]);
 * ```
 */
export async function queryStatements(
  client: pg.ClientBase,
  statements: readonly string[],
): Promise<pg.QueryResult[]> {
  const result = (await client.query(statements.join(";\n"))) as pg.QueryResult | pg.QueryResult[];
  return Array.isArray(result) ? result : [result];
}
