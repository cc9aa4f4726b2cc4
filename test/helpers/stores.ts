// The store matrix for tests that must pass on both stores: `describe.each(storeFactories())`.
// SQLite: a file in a temp folder. PostgreSQL: a fresh database per store (dropped by its
// cleanup) with hookinbox in its default schema `hookinbox` and the test's own tables in `public`,
// as in a user's database: a handler's `ctx.transaction` must find them with the database's
// default search_path.
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { parsePostgresUrl } from "../../src/store/postgres/connection.ts";
import { type Dialect, dialectOf, type StoreKind } from "./dialect.ts";
import { freshDatabase } from "./postgres.ts";
import { tempDir } from "./temp.ts";

export type { Dialect, StoreKind } from "./dialect.ts";

/** One store for one test: its URL, its SQL dialect, and direct SQL for setup and assertions. */
export interface TestStore {
  readonly kind: StoreKind;
  /** The `store` URL for a config or a child process. */
  readonly url: string;
  readonly dialect: Dialect;
  /** A folder for files the test needs (removed by cleanup). */
  readonly dir: string;
  /**
   * Runs one statement against the store's database, with `?` placeholders on both stores.
   * PostgreSQL: bare names resolve to the user's tables (`public`) first, then to hookinbox's
   * schema, so assertions may name both. Integers and bigints come back as numbers on both.
   */
  rows<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Runs DDL or other statements without results (several allowed on SQLite, one on PostgreSQL). */
  exec(sql: string): Promise<void>;
  /** `SELECT count(*) AS n …` → n. */
  count(sql: string, params?: readonly unknown[]): Promise<number>;
  cleanup(): Promise<void>;
}

export interface StoreFactory {
  readonly kind: StoreKind;
  open(): Promise<TestStore>;
}

const numeric = (value: string) => Number(value);

/**
 * A small test pool on a store's database, reading int8 and numeric as numbers. Bare names resolve
 * to the user's tables first (the database's default path), then to the store's schema, so tests
 * create user tables where a user's connection would and still count hookinbox's rows by name.
 */
export function schemaPool(storeUrl: string, max = 2): pg.Pool {
  const url = parsePostgresUrl(storeUrl);
  return new pg.Pool({
    connectionString: url.connectionString,
    max,
    options: `-c search_path="$user",public,${url.schema}`,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === 20 || oid === 1700
          ? numeric
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
}

function sqliteStore(): TestStore {
  const tmp = tempDir();
  const path = join(tmp.dir, "hookinbox.db");
  const dialect = dialectOf("sqlite:");
  const withDb = <T>(work: (db: Database.Database) => T): T => {
    const db = new Database(path);
    try {
      db.pragma("busy_timeout = 5000");
      return work(db);
    } finally {
      db.close();
    }
  };
  const rows = async <Row>(sql: string, params: readonly unknown[] = []) =>
    withDb((db) => {
      const statement = db.prepare(sql);
      if (statement.reader) return statement.all(...params) as Row[];
      statement.run(...params);
      return [] as Row[];
    });
  return {
    kind: "sqlite",
    url: `sqlite:${path}`,
    dialect,
    dir: tmp.dir,
    rows,
    exec: async (sql) => withDb((db) => void db.exec(sql)),
    count: async (sql, params) => Number((await rows<{ n: number }>(sql, params))[0]?.n),
    cleanup: async () => tmp.cleanup(),
  };
}

async function postgresStore(): Promise<TestStore> {
  const tmp = tempDir();
  const database = await freshDatabase();
  const url = database.url;
  const dialect = dialectOf(url);
  const pool = schemaPool(url);
  const rows = async <Row>(sql: string, params: readonly unknown[] = []) =>
    (await pool.query(dialect.sql(sql), params as unknown[])).rows as Row[];
  return {
    kind: "postgres",
    url,
    dialect,
    dir: tmp.dir,
    rows,
    exec: async (sql) => void (await pool.query(sql)),
    count: async (sql, params) => Number((await rows<{ n: number }>(sql, params))[0]?.n),
    cleanup: async () => {
      await pool.end();
      await database.cleanup();
      tmp.cleanup();
    },
  };
}

/**
 * The stores to run a test file on. `HOOKINBOX_TEST_STORES=sqlite` (or `postgres`) narrows the
 * matrix while working on one store.
 *
 * @example
 * ```ts
 * describe.each(storeFactories())("ordering ($kind)", ({ open }) => { … });
 * ```
 */
export function storeFactories(): StoreFactory[] {
  const all: StoreFactory[] = [
    { kind: "sqlite", open: async () => sqliteStore() },
    { kind: "postgres", open: postgresStore },
  ];
  const only = process.env.HOOKINBOX_TEST_STORES?.split(",").map((s) => s.trim());
  return only ? all.filter((f) => only.includes(f.kind)) : all;
}
