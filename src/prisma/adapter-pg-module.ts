import { createRequire } from "node:module";
import { join } from "node:path";

/** The `pg` module shape hookinbox needs: its `Pool` class. */
export interface PgModuleLike {
  readonly Pool: PoolClassLike;
}

// biome-ignore lint/suspicious/noExplicitAny: any pg version's Pool, whatever its config type.
type PoolClassLike = abstract new (config?: any) => object;

let cached: Array<PgModuleLike["Pool"]> | undefined;

/**
 * The `Pool` classes of the `pg` copies that `@prisma/adapter-pg` loads, resolved from hookinbox's
 * own place and from the working folder (`createRequire` from the adapter's resolved path): `new
 * PrismaPg(pool)` adopts a pool only if it is an instance of that copy's `Pool`. Empty where the
 * adapter cannot be resolved (a bundle): then nothing can be checked here.
 *
 * @example
 * ```ts
 * const pools = adapterPgPools();
 * if (pools.length > 0 && !pools.includes(pg.Pool)) throw hookinboxError("HOOKINBOX_PRISMA_PG_MISMATCH");
 * ```
 */
export function adapterPgPools(): Array<PgModuleLike["Pool"]> {
  if (cached) return cached;
  const found = new Set<PgModuleLike["Pool"]>();
  for (const from of [import.meta.url, join(process.cwd(), "package.json")]) {
    try {
      const adapter = createRequire(from).resolve("@prisma/adapter-pg");
      const pg = createRequire(adapter)("pg") as PgModuleLike;
      found.add(pg.Pool);
    } catch {
      // Not resolvable from here.
    }
  }
  cached = [...found];
  return cached;
}
