import { hookinboxError } from "../../errors.ts";

/**
 * A value `tx.sql` binds: the same JavaScript value runs on SQLite and PostgreSQL.
 *
 * @example
 * ```ts
 * const values: SqlValue[] = ["ord_1", 100, 9_007_199_254_740_993n, true, new Date(), null];
 * ```
 */
export type SqlValue = string | number | bigint | boolean | Date | Uint8Array | null;

/** The store dialects a template is written out for. */
export type SqlDialect = "postgres" | "sqlite";

/** A tagged template written out for one store: statement text and its parameters. */
export interface SqlStatement {
  readonly text: string;
  readonly params: unknown[];
}

/** What `tx.sql` and `tx.query` answer: the rows a statement returned and how many it touched. */
export interface SqlResult<Row> {
  rows: Row[];
  rowCount: number;
}

const isTemplate = (strings: unknown, values: readonly unknown[]): strings is readonly string[] =>
  Array.isArray(strings) &&
  Array.isArray((strings as { raw?: unknown }).raw) &&
  strings.length === values.length + 1 &&
  strings.every((part) => typeof part === "string");

function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value instanceof Date) return "an invalid Date";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/** One value as the dialect's driver binds it, or a refusal naming the parameter. */
function bindValue(dialect: SqlDialect, value: unknown, where: string): unknown {
  if (value === undefined) throw hookinboxError("HOOKINBOX_SQL_VALUE_UNDEFINED", where);
  if (value === null || typeof value === "string" || typeof value === "number") return value;
  if (typeof value === "bigint") return value;
  if (typeof value === "boolean") return dialect === "sqlite" ? (value ? 1 : 0) : value;
  if (value instanceof Date && !Number.isNaN(value.getTime())) {
    return dialect === "sqlite" ? value.toISOString() : value;
  }
  if (value instanceof Uint8Array) {
    // better-sqlite3 binds only a Buffer as a blob; a view over the same bytes is enough.
    return dialect === "sqlite" && !Buffer.isBuffer(value)
      ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      : value;
  }
  throw hookinboxError("HOOKINBOX_SQL_VALUE_UNSUPPORTED", `${where} is ${describe(value)}`);
}

/**
 * The `n`-th (1-based) bound value's placeholder as `dialect` writes it: `$n` on PostgreSQL,
 * `?` on SQLite.
 *
 * @example
 * ```ts
 * placeholder("postgres", 2); // "$2"
 * placeholder("sqlite", 2); // "?"
 * ```
 */
export function placeholder(dialect: SqlDialect, n: number): string {
  return dialect === "postgres" ? `$${n}` : "?";
}

/**
 * `column` is one of a list of texts bound at one `?`: read by json_each on SQLite, `= ANY` of a
 * text[] on PostgreSQL. Bind the list with {@link listValue}.
 *
 * @example
 * ```ts
 * inList("postgres", "event_id"); // "event_id = ANY(?::text[])"
 * inList("sqlite", "event_id"); // "event_id IN (SELECT value FROM json_each(?))"
 * ```
 */
export function inList(dialect: SqlDialect, column: string): string {
  return dialect === "postgres"
    ? `${column} = ANY(?::text[])`
    : `${column} IN (SELECT value FROM json_each(?))`;
}

/**
 * A list of texts as {@link inList} binds it: an array on PostgreSQL, JSON text on SQLite.
 *
 * @example
 * ```ts
 * listValue("sqlite", ["a", "b"]); // '["a","b"]'
 * ```
 */
export function listValue(dialect: SqlDialect, values: readonly string[]): unknown {
  return dialect === "postgres" ? [...values] : JSON.stringify(values);
}

/**
 * Writes a tagged template out for a store: each `${value}` becomes a placeholder (`$1, $2, …`
 * on PostgreSQL, `?` on SQLite) and a parameter converted for that store's driver (on SQLite a
 * boolean binds as 1/0, a Date as its ISO string, a Uint8Array as a Buffer). Refuses `undefined`
 * (HOOKINBOX_SQL_VALUE_UNDEFINED), objects, arrays, functions and symbols
 * (HOOKINBOX_SQL_VALUE_UNSUPPORTED), and a call that is not a tag (HOOKINBOX_SQL_NOT_TEMPLATE).
 *
 * @example
 * ```ts
 * const strings = Object.assign(["UPDATE orders SET paid = ", " WHERE id = ", ""], {
 *   raw: ["UPDATE orders SET paid = ", " WHERE id = ", ""],
 * });
 * sqlStatement("sqlite", strings, [true, "ord_1"]);
 * // { text: "UPDATE orders SET paid = ? WHERE id = ?", params: [1, "ord_1"] }
 * ```
 */
export function sqlStatement(
  dialect: SqlDialect,
  strings: TemplateStringsArray,
  values: readonly unknown[],
): SqlStatement {
  if (!isTemplate(strings, values)) {
    throw hookinboxError("HOOKINBOX_SQL_NOT_TEMPLATE");
  }
  let text = strings[0]!;
  const params = values.map((value, index) => {
    text += `${placeholder(dialect, index + 1)}${strings[index + 1]}`;
    return bindValue(dialect, value, `parameter ${index + 1} of ${values.length}`);
  });
  return { text, params };
}

/**
 * The `tx.sql` tag of a transaction client: writes the template out for `dialect` and runs it
 * with `query`, answering what `query` answers (`{ rows, rowCount }`). A refusal is a rejected
 * promise, like a failed statement.
 *
 * @example
 * ```ts
 * const sql = sqlTag("postgres", (text, params) => client.query(text, params));
 * const { rows } = await sql<{ id: string }>`SELECT id FROM orders WHERE paid = ${true}`;
 * ```
 */
export function sqlTag(
  dialect: SqlDialect,
  query: (text: string, params: readonly unknown[]) => Promise<SqlResult<unknown>>,
): <Row = Record<string, unknown>>(
  strings: TemplateStringsArray,
  ...values: readonly SqlValue[]
) => Promise<SqlResult<Row>> {
  return async <Row>(strings: TemplateStringsArray, ...values: readonly SqlValue[]) => {
    const statement = sqlStatement(dialect, strings, values);
    return (await query(statement.text, statement.params)) as SqlResult<Row>;
  };
}
