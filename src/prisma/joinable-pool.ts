import { hookinboxError } from "../errors.ts";
import { isOpenTransaction } from "../handlers/open-transactions.ts";
import { adapterPgPools, type PgModuleLike } from "./adapter-pg-module.ts";
import { type PgClientLike, savepointClient } from "./savepoint-client.ts";
import { currentScope, type PrismaScope } from "./scope.ts";

/** Marks a joinable pool's prototype, across copies of hookinbox. */
const joinableMark = Symbol.for("hookinbox.joinablePool");

type PoolBase = new (config?: unknown) => { connect(callback?: unknown): unknown };

const classes = new WeakMap<object, PoolBase>();

/** The delivery's connection for one Prisma transaction in `scope`, behind a savepoint. */
async function joinDelivery(scope: PrismaScope): Promise<PgClientLike> {
  if (scope.ended || !isOpenTransaction(scope.tx))
    throw hookinboxError("HOOKINBOX_PRISMA_OUTSIDE_TRANSACTION");
  if (scope.tx.dialect !== "postgres") throw hookinboxError("HOOKINBOX_PRISMA_DIALECT_MISMATCH");
  scope.joined += 1;
  return savepointClient(
    scope,
    scope.tx.connection as PgClientLike,
    `hookinbox_prisma_${scope.joined}`,
  );
}

/**
 * The joinable subclass of `pg.Pool` (one per `pg` copy), unchecked: see `joinablePool`.
 *
 * @example
 * ```ts
 * const Joinable = joinablePoolClass(pg);
 * const pool = new Joinable({ connectionString });
 * ```
 */
export function joinablePoolClass<P extends PgModuleLike>(pg: P): P["Pool"] {
  const existing = classes.get(pg.Pool);
  if (existing) return existing as unknown as P["Pool"];
  const Base = pg.Pool as unknown as PoolBase;
  class JoinablePool extends Base {
    override connect(callback?: unknown): unknown {
      const scope = currentScope();
      // pool.query() connects with a callback: it stays on the pool's own connections.
      if (callback !== undefined || scope === undefined) return super.connect(callback);
      return joinDelivery(scope);
    }
  }
  Object.defineProperty(JoinablePool.prototype, joinableMark, { value: true });
  classes.set(pg.Pool, JoinablePool);
  return JoinablePool as unknown as P["Pool"];
}

/**
 * Whether `value` is a pool made by `joinablePool` (from any copy of hookinbox).
 *
 * @example
 * ```ts
 * isJoinablePool(joinablePool(pg, { connectionString })); // true
 * ```
 */
export function isJoinablePool(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { [joinableMark]?: unknown })[joinableMark] === true
  );
}

/**
 * A `pg.Pool` for `new PrismaPg(pool)` that Prisma can use inside a delivery's transaction. Outside
 * `withPrisma` it is an ordinary pool. Inside it, the connection Prisma takes for its transaction
 * is the delivery's own (hookinbox's `tx.connection`), its BEGIN, COMMIT and ROLLBACK turned into a
 * savepoint, so Prisma's writes commit with the delivery's `done` or not at all.
 *
 * Pass the `pg` module that `@prisma/adapter-pg` loads: PrismaPg adopts only pools of its own
 * `pg` copy, and would silently open a pool of its own otherwise. A `pg` that is not that copy is
 * refused with HOOKINBOX_PRISMA_PG_MISMATCH.
 *
 * @example
 * ```ts
 * import { PrismaPg } from "@prisma/adapter-pg";
 * import pg from "pg";
 * import { joinablePool } from "hookinbox/prisma";
 * import { PrismaClient } from "./generated/prisma/client.ts";
 *
 * const pool = joinablePool(pg, { connectionString: process.env.DATABASE_URL });
 * export const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
 * ```
 */
export function joinablePool<P extends PgModuleLike>(
  pg: P,
  config?: ConstructorParameters<P["Pool"]>[0],
): InstanceType<P["Pool"]> {
  const adapterPools = adapterPgPools();
  if (adapterPools.length > 0 && !adapterPools.includes(pg.Pool))
    throw hookinboxError("HOOKINBOX_PRISMA_PG_MISMATCH");
  const Joinable = joinablePoolClass(pg) as unknown as new (
    config?: unknown,
  ) => InstanceType<P["Pool"]>;
  return new Joinable(config);
}
