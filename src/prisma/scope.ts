import { AsyncLocalStorage } from "node:async_hooks";
import type { TransactionClient } from "../store/queue-types.ts";

/** One `withPrisma` call: the delivery transaction Prisma's connections join while it runs. */
export interface PrismaScope {
  readonly tx: TransactionClient;
  /** How many Prisma transactions were handed the delivery's connection in this scope. */
  joined: number;
  /** Set when `withPrisma` has returned or thrown: later connections and queries are refused. */
  ended: boolean;
}

/**
 * The scope store, on globalThis under a registered symbol so that the pool and `withPrisma` agree
 * even when they come from two copies of hookinbox (its ESM and CommonJS builds).
 */
const storageKey = Symbol.for("hookinbox.prismaScope");
const holder = globalThis as { [storageKey]?: AsyncLocalStorage<PrismaScope> };
holder[storageKey] ??= new AsyncLocalStorage<PrismaScope>();
const storage: AsyncLocalStorage<PrismaScope> = holder[storageKey];

/**
 * Runs `work` inside `scope`: a joinable pool's `connect()` called from it joins `scope.tx`.
 *
 * @example
 * ```ts
 * await runInScope({ tx, joined: 0, ended: false }, () => prisma.$transaction(fn));
 * ```
 */
export function runInScope<T>(scope: PrismaScope, work: () => T): T {
  return storage.run(scope, work);
}

/**
 * The `withPrisma` scope the caller runs in, if any.
 *
 * @example
 * ```ts
 * const scope = currentScope();
 * if (scope) return joinDelivery(scope);
 * ```
 */
export function currentScope(): PrismaScope | undefined {
  return storage.getStore();
}
