// The SQL differences between the two stores that handler code and test assertions meet.
// No vitest import here: child-process fixtures use it too.

export type StoreKind = "sqlite" | "postgres";

/** What a handler's own SQL must know about the store it runs in. */
export interface Dialect {
  readonly kind: StoreKind;
  /** Rewrites `?` placeholders as `$1, $2, …` for PostgreSQL; SQLite keeps them. */
  sql(text: string): string;
  /** The column type of an 8-byte float (SQLite REAL; PostgreSQL REAL is only 4 bytes). */
  readonly double: string;
}

const sqlite: Dialect = { kind: "sqlite", sql: (text) => text, double: "REAL" };

const postgres: Dialect = {
  kind: "postgres",
  sql: (text) => {
    let n = 0;
    return text.replace(/\?/g, () => `$${++n}`);
  },
  double: "double precision",
};

/** The dialect of a store URL (`sqlite:…` or `postgres://…`). */
export function dialectOf(storeUrl: string): Dialect {
  return /^postgres(ql)?:\/\//i.test(storeUrl) ? postgres : sqlite;
}
