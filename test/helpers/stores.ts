// The store matrix for tests that must pass on both stores: `describe.each(storeFactories())`.
// SQLite: a file in a temp folder. PostgreSQL: a fresh database per store (dropped by its
// cleanup), copied from the run's migrated template (test/postgres-global-setup.ts), with
// hookinbox in its default schema `hookinbox` and the test's own tables in `public`,
// as in a user's database: a handler's `ctx.transaction` must find them with the database's
// default search_path. PgBouncer: the same, with the store URL through a real PgBouncer in
// transaction mode (`?pgbouncer=true`, no directUrl: migrations through the pooler, no LISTEN);
// the test's own SQL connects directly.
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { parsePostgresUrl } from "../../src/store/postgres/connection.ts";
import { type Dialect, dialectOf, type StoreKind } from "./dialect.ts";
import { freshDatabase, pgbouncerServerUrl } from "./postgres.ts";
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
  /** `sqlite`, `postgres`, or `pgbouncer` (PostgreSQL behind PgBouncer in transaction mode). */
  readonly name: "sqlite" | "postgres" | "pgbouncer";
  open(): Promise<TestStore>;
}

const numeric = (value: string) => Number(value);

/**
 * A pg pool for a test's own SQL. `pool.end()` resolves once its clients are removed, before
 * their connections have closed; a cleanup that then drops the database terminates them
 * (57P01), and the pool re-emits that as an 'error' that, without a listener, is an uncaught
 * exception in whichever test runs next. Errors of idle connections are ignored here: the test's
 * queries still reject on their own.
 *
 * @example
 * ```ts
 * const pool = testPool({ connectionString: database.url, max: 2 });
 * ```
 */
export function testPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on("error", () => undefined);
  return pool;
}

/**
 * A small test pool on a store's database, reading int8 and numeric as numbers. Bare names resolve
 * to the user's tables first (the database's default path), then to the store's schema, so tests
 * create user tables where a user's connection would and still count hookinbox's rows by name.
 */
export function schemaPool(storeUrl: string, max = 2): pg.Pool {
  const url = parsePostgresUrl(storeUrl);
  return testPool({
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

async function postgresStore(through: "direct" | "pgbouncer"): Promise<TestStore> {
  const tmp = tempDir();
  // hookinbox's schema already migrated: opening the store finds nothing to apply.
  const database = await freshDatabase({ migrated: true });
  const dialect = dialectOf(database.url);
  const pool = schemaPool(database.url);
  let url = database.url;
  if (through === "pgbouncer") {
    const bouncer = new URL(pgbouncerServerUrl());
    bouncer.pathname = new URL(database.url).pathname;
    bouncer.searchParams.set("pgbouncer", "true");
    url = bouncer.toString();
  }
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
 * The stores to run a test file on: SQLite, PostgreSQL, and PostgreSQL through PgBouncer (left out,
 * loudly, where the global setup could not start PgBouncer). `HOOKINBOX_TEST_STORES=sqlite` (or
 * `postgres`, `pgbouncer`, comma-separated) narrows the matrix while working on one store.
 *
 * @example
 * ```ts
 * describe.each(storeFactories())("ordering ($name)", ({ open }) => { … });
 * ```
 */
export function storeFactories(): StoreFactory[] {
  const all: StoreFactory[] = [
    { kind: "sqlite", name: "sqlite", open: async () => sqliteStore() },
    { kind: "postgres", name: "postgres", open: () => postgresStore("direct") },
  ];
  if (pgbouncerServerUrl() !== "")
    all.push({ kind: "postgres", name: "pgbouncer", open: () => postgresStore("pgbouncer") });
  const only = process.env.HOOKINBOX_TEST_STORES?.split(",").map((s) => s.trim());
  return only ? all.filter((f) => only.includes(f.name)) : all;
}

/** One store to run a test on, with the SQLite writer to open it with (undefined on PostgreSQL). */
export interface StoreVariant {
  /** `sqlite-inline`, `sqlite-thread`, `postgres` or `pgbouncer`. */
  readonly name: string;
  readonly open: StoreFactory["open"];
  readonly writer: "inline" | "thread" | undefined;
}

/**
 * The store matrix with SQLite twice, once per writer: inline (the library default) and thread
 * (`hookinbox start`). Pass `writer` to the inbox as `sqliteWriter` when it is set.
 *
 * @example
 * ```ts
 * describe.each(storeVariants())("tx.sql ($name)", ({ open, writer }) => { … });
 * ```
 */
export function storeVariants(): StoreVariant[] {
  return storeFactories().flatMap((factory): StoreVariant[] =>
    factory.kind === "sqlite"
      ? [
          { name: "sqlite-inline", open: factory.open, writer: "inline" },
          { name: "sqlite-thread", open: factory.open, writer: "thread" },
        ]
      : [{ name: factory.name, open: factory.open, writer: undefined }],
  );
}
