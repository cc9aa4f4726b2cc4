import { isJoinablePool } from "./joinable-pool.ts";

/** What a PrismaClient keeps of its driver adapter factory (Prisma 7 internals, read defensively). */
interface AdapterFactoryShape {
  readonly provider?: unknown;
  /** PrismaPg: the pool it was given, when that pool is an instance of its own `pg` copy. */
  readonly externalPool?: unknown;
  /** PrismaPg: the config it builds its own pool from (the pool itself, when not adopted). */
  readonly config?: unknown;
}

/**
 * The driver adapter factory a PrismaClient was built with, if its internals can be read.
 *
 * @example
 * ```ts
 * adapterOf(new PrismaClient({ adapter: new PrismaPg(pool) })); // the PrismaPg factory
 * ```
 */
export function adapterOf(prisma: object): AdapterFactoryShape | undefined {
  const engineConfig = (prisma as { _engineConfig?: { adapter?: unknown } })._engineConfig;
  const adapter = engineConfig?.adapter;
  return typeof adapter === "object" && adapter !== null ? adapter : undefined;
}

/**
 * The store kind a PrismaClient talks to (`postgres` or `sqlite`), or undefined when it cannot be
 * told (another database, or Prisma internals that changed).
 *
 * @example
 * ```ts
 * if (prismaDialect(prisma) === "sqlite" && tx.dialect === "postgres") throw …;
 * ```
 */
export function prismaDialect(prisma: object): "postgres" | "sqlite" | "other" | undefined {
  const provider =
    adapterOf(prisma)?.provider ?? (prisma as { _activeProvider?: unknown })._activeProvider;
  if (typeof provider !== "string") return undefined;
  if (provider === "postgres" || provider === "postgresql") return "postgres";
  if (provider === "sqlite") return "sqlite";
  return "other";
}

/**
 * How a PostgreSQL PrismaClient's adapter holds its pool: `joinable` (a joinablePool it adopted),
 * `pg-mismatch` (a joinablePool it did not adopt, being of another `pg` copy: it opened a pool of
 * its own), `not-joinable` (any other pool or config), or `unknown` (internals not readable).
 *
 * @example
 * ```ts
 * if (adapterPool(prisma) === "not-joinable") throw hookinboxError("HOOKINBOX_PRISMA_NOT_JOINABLE");
 * ```
 */
export function adapterPool(
  prisma: object,
): "joinable" | "pg-mismatch" | "not-joinable" | "unknown" {
  const adapter = adapterOf(prisma);
  if (!adapter || !("externalPool" in adapter)) return "unknown";
  if (isJoinablePool(adapter.externalPool)) return "joinable";
  if (isJoinablePool(adapter.config)) return "pg-mismatch";
  return "not-joinable";
}
