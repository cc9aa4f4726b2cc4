import { hookinboxError } from "../errors.ts";
import { isOpenTransaction } from "../handlers/open-transactions.ts";
import { currentScope, type PrismaScope } from "./scope.ts";

/** Marks a joinable SQLite adapter factory, across copies of hookinbox. */
const joinableMark = Symbol.for("hookinbox.joinableSqlite");

/** What Prisma's engine uses of a driver adapter factory (`PrismaBetterSqlite3`). */
export interface SqliteAdapterFactoryLike {
  readonly provider: string;
  readonly adapterName: string;
  connect(): Promise<object>;
}

/** The connected adapter of `@prisma/adapter-better-sqlite3`: its Database is `client`. */
interface ConnectedSqliteAdapter {
  client: SqliteDatabaseLike;
  startTransaction(isolationLevel?: string): Promise<unknown>;
}

/** What that adapter uses of a better-sqlite3 Database. */
interface SqliteDatabaseLike {
  prepare(sql: string): { safeIntegers(on?: boolean): unknown };
  close(): unknown;
}

/** Prisma's transaction statements and what they become inside the delivery's transaction. */
const rewrites = (savepoint: string): Record<string, string> => ({
  BEGIN: `SAVEPOINT ${savepoint}`,
  COMMIT: `RELEASE SAVEPOINT ${savepoint}`,
  ROLLBACK: `ROLLBACK TO ${savepoint}`,
});

/**
 * The store's Database as Prisma's adapter sees it inside one Prisma transaction: BEGIN, COMMIT
 * and ROLLBACK become a savepoint, statements read integers as BigInt (as Prisma's own Database
 * does), and every statement is refused once the scope has ended.
 */
function savepointDatabase(scope: PrismaScope, db: SqliteDatabaseLike, savepoint: string) {
  const statements = rewrites(savepoint);
  return {
    prepare(sql: string) {
      if (scope.ended || !isOpenTransaction(scope.tx)) throw hookboxOutside();
      const statement = db.prepare(statements[sql.trim().toUpperCase()] ?? sql);
      statement.safeIntegers(true);
      return statement;
    },
    close() {
      // The Database is the store's: hookinbox closes it.
    },
  };
}

const hookboxOutside = () => hookinboxError("HOOKINBOX_PRISMA_OUTSIDE_TRANSACTION");

/**
 * A Prisma transaction on the delivery's own SQLite connection: a second adapter of the same
 * class (on an in-memory database, closed at once) whose Database is swapped for the store's,
 * behind a savepoint.
 */
async function joinDelivery(
  scope: PrismaScope,
  helper: () => Promise<ConnectedSqliteAdapter>,
): Promise<unknown> {
  if (scope.ended || !isOpenTransaction(scope.tx)) throw hookboxOutside();
  if (scope.tx.dialect !== "sqlite") throw hookinboxError("HOOKINBOX_PRISMA_DIALECT_MISMATCH");
  if (scope.tx.connection === null) throw hookinboxError("HOOKINBOX_PRISMA_SQLITE_UNSUPPORTED");
  scope.joined += 1;
  const adapter = await helper();
  adapter.client.close();
  adapter.client = savepointDatabase(
    scope,
    scope.tx.connection as SqliteDatabaseLike,
    `hookinbox_prisma_${scope.joined}`,
  );
  return adapter.startTransaction();
}

/**
 * Whether `value` is an adapter factory made by `joinableSqlite`.
 *
 * @example
 * ```ts
 * isJoinableSqlite(joinableSqlite(PrismaBetterSqlite3, { url: "file:./app.db" })); // true
 * ```
 */
export function isJoinableSqlite(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { [joinableMark]?: unknown })[joinableMark] === true
  );
}

/**
 * An adapter for `new PrismaClient({ adapter })` on SQLite that Prisma can use inside a delivery's
 * transaction: outside `withPrisma` it is `new PrismaBetterSqlite3(config, options)`; inside it,
 * Prisma's transaction runs on the store's own connection (`tx.connection`, the inline writer's
 * better-sqlite3 Database), behind a savepoint, so its rows commit with the delivery's `done`.
 * Point `config.url` at the store's database file: that is where Prisma's rows go inside
 * `withPrisma`. With `writer: "thread"` the connection lives in another thread, and `withPrisma`
 * refuses (HOOKINBOX_PRISMA_SQLITE_UNSUPPORTED).
 *
 * @example
 * ```ts
 * import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
 * import { joinableSqlite } from "hookinbox/prisma";
 * import { PrismaClient } from "./generated/prisma/client.ts";
 *
 * export const prisma = new PrismaClient({
 *   adapter: joinableSqlite(PrismaBetterSqlite3, { url: "file:./.hookinbox/hookinbox.db" }),
 * });
 * ```
 */
export function joinableSqlite<C, O, F extends SqliteAdapterFactoryLike>(
  Factory: new (config: C, options?: O) => F,
  config: C,
  options?: O,
): F {
  const factory = new Factory(config, options);
  const helper = () =>
    new Factory(
      { ...(config as object), url: ":memory:" } as C,
      options,
    ).connect() as Promise<ConnectedSqliteAdapter>;
  const joinable = Object.create(factory) as F;
  Object.defineProperty(joinable, joinableMark, { value: true });
  joinable.connect = async () => {
    const adapter = (await factory.connect()) as ConnectedSqliteAdapter;
    const startOwn = adapter.startTransaction.bind(adapter);
    return new Proxy(adapter, {
      get(target, property) {
        if (property === "startTransaction")
          return (isolationLevel?: string) => {
            const scope = currentScope();
            return scope ? joinDelivery(scope, helper) : startOwn(isolationLevel);
          };
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
  return joinable;
}
