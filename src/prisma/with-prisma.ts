import { hookinboxError } from "../errors.ts";
import { isOpenTransaction } from "../handlers/open-transactions.ts";
import type { TransactionClient } from "../store/queue-types.ts";
import { isJoinableSqlite } from "./joinable-sqlite.ts";
import { adapterOf, adapterPool, prismaDialect } from "./prisma-adapter.ts";
import { type PrismaScope, runInScope } from "./scope.ts";

/** Limits passed to Prisma's interactive transaction (its defaults: 2 s and 5 s). */
export interface WithPrismaOptions {
  /** How long Prisma may wait to start its transaction, in ms. */
  readonly maxWait?: number;
  /** How long the callback may run before Prisma rolls its part back, in ms. */
  readonly timeout?: number;
}

/** The client `prisma.$transaction(fn)` hands to `fn`, for a PrismaClient type `C`. */
export type PrismaTransactionClient<C> = C extends {
  // biome-ignore lint/suspicious/noExplicitAny: matches every generated client's $transaction.
  $transaction(fn: (db: infer D) => any, options?: any): any;
}
  ? D
  : never;

interface TransactionCapable {
  $transaction(
    fn: (db: unknown) => Promise<unknown>,
    options?: { maxWait?: number; timeout?: number },
  ): Promise<unknown>;
}

/** The refusal, if any, before anything runs: each its own code. */
function refusal(prisma: object, tx: unknown) {
  if (!isOpenTransaction(tx)) return hookinboxError("HOOKINBOX_PRISMA_NO_TRANSACTION");
  const dialect = prismaDialect(prisma);
  if (dialect !== undefined && dialect !== tx.dialect)
    return hookinboxError(
      "HOOKINBOX_PRISMA_DIALECT_MISMATCH",
      `the PrismaClient is ${dialect}, the store ${tx.dialect}`,
    );
  if (tx.dialect === "sqlite") {
    // writer: "thread": the store's connection lives in another thread.
    if (tx.connection === null) return hookinboxError("HOOKINBOX_PRISMA_SQLITE_UNSUPPORTED");
    const adapter = adapterOf(prisma);
    return adapter && !isJoinableSqlite(adapter)
      ? hookinboxError("HOOKINBOX_PRISMA_NOT_JOINABLE")
      : undefined;
  }
  switch (adapterPool(prisma)) {
    case "pg-mismatch":
      return hookinboxError("HOOKINBOX_PRISMA_PG_MISMATCH");
    case "not-joinable":
      return hookinboxError("HOOKINBOX_PRISMA_NOT_JOINABLE");
    default:
      return undefined;
  }
}

/**
 * Runs `fn` in a Prisma interactive transaction that joins the delivery's transaction `tx` (from
 * `ctx.transaction`): every query on `db` runs on the delivery's connection, inside a savepoint,
 * and commits with the delivery's `done` or not at all. Returns what `fn` returns. The
 * PrismaClient must be built on `joinablePool` (PostgreSQL) or `joinableSqlite` (SQLite, inline
 * writer). Use `db`, never `prisma`, inside `fn`, and await every query there.
 *
 * Refusals: HOOKINBOX_PRISMA_NO_TRANSACTION (`tx` is not an open `ctx.transaction` tx),
 * HOOKINBOX_PRISMA_DIALECT_MISMATCH, HOOKINBOX_PRISMA_SQLITE_UNSUPPORTED,
 * HOOKINBOX_PRISMA_NOT_JOINABLE, HOOKINBOX_PRISMA_PG_MISMATCH; a query after it returned:
 * HOOKINBOX_PRISMA_OUTSIDE_TRANSACTION.
 *
 * @example
 * ```ts
 * import type { Handler } from "hookinbox";
 * import { withPrisma } from "hookinbox/prisma";
 * import { prisma } from "./prisma.ts";
 *
 * export const credit: Handler<{ data: { object: { id: string; amount: number } } }> = async (event, ctx) => {
 *   const payment = event.payload.data.object;
 *   await ctx.transaction((tx) =>
 *     withPrisma(prisma, tx, (db) =>
 *       db.credit.upsert({
 *         where: { eventId: payment.id },
 *         create: { eventId: payment.id, amount: payment.amount },
 *         update: {},
 *       }),
 *     ),
 *   );
 * };
 * ```
 */
export async function withPrisma<C extends object, R>(
  prisma: C,
  tx: TransactionClient,
  fn: (db: PrismaTransactionClient<C>) => Promise<R>,
  options: WithPrismaOptions = {},
): Promise<R> {
  const refused = refusal(prisma, tx);
  if (refused) throw refused;
  const scope: PrismaScope = { tx, joined: 0, ended: false };
  try {
    return (await runInScope(scope, () =>
      (prisma as unknown as TransactionCapable).$transaction(async (db) => {
        // Prisma's transaction started on a connection of its own: write nothing there.
        if (scope.joined === 0) throw hookinboxError("HOOKINBOX_PRISMA_NOT_JOINABLE");
        return fn(db as PrismaTransactionClient<C>);
      }, options),
    )) as R;
  } finally {
    scope.ended = true;
  }
}
