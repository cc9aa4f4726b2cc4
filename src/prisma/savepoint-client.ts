import { hookinboxError } from "../errors.ts";
import { isOpenTransaction } from "../handlers/open-transactions.ts";
import type { PrismaScope } from "./scope.ts";

/** What Prisma's pg adapter uses of a pooled client. */
export interface PgClientLike {
  query(config: unknown, ...rest: unknown[]): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  removeListener(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** Prisma's own transaction statements, as it sends them, and what they become inside a delivery. */
const rewrites = (savepoint: string): Record<string, string> => ({
  BEGIN: `SAVEPOINT ${savepoint}`,
  COMMIT: `RELEASE SAVEPOINT ${savepoint}`,
  ROLLBACK: `ROLLBACK TO SAVEPOINT ${savepoint}`,
});

function textOf(config: unknown): string | undefined {
  if (typeof config === "string") return config;
  if (config && typeof config === "object" && "text" in config) {
    const { text } = config as { text: unknown };
    return typeof text === "string" ? text : undefined;
  }
  return undefined;
}

function withText(config: unknown, text: string): unknown {
  return typeof config === "string" ? text : { ...(config as object), text };
}

/**
 * A pooled-client look-alike over the delivery's transaction connection, for Prisma's pg adapter:
 * Prisma's `BEGIN`, `COMMIT` and `ROLLBACK` become a savepoint, its release and a rollback to it,
 * and `release()` gives nothing back (hookinbox commits and releases the connection with the
 * delivery). Every query is refused with HOOKINBOX_PRISMA_OUTSIDE_TRANSACTION once `withPrisma`
 * has ended or the delivery's transaction is no longer open.
 *
 * @example
 * ```ts
 * const client = savepointClient(scope, scope.tx.connection as PgClientLike, "hookinbox_prisma_1");
 * await client.query({ text: "BEGIN" }); // runs SAVEPOINT hookinbox_prisma_1
 * ```
 */
export function savepointClient(
  scope: PrismaScope,
  connection: PgClientLike,
  savepoint: string,
): PgClientLike & { release(error?: unknown): void } {
  const statements = rewrites(savepoint);
  return {
    async query(config: unknown, ...rest: unknown[]) {
      if (scope.ended || !isOpenTransaction(scope.tx))
        throw hookinboxError("HOOKINBOX_PRISMA_OUTSIDE_TRANSACTION");
      const text = textOf(config);
      const rewritten = text === undefined ? undefined : statements[text.trim().toUpperCase()];
      return connection.query(rewritten ? withText(config, rewritten) : config, ...rest);
    },
    on(event, listener) {
      connection.on(event, listener);
      return this;
    },
    removeListener(event, listener) {
      connection.removeListener(event, listener);
      return this;
    },
    release() {
      // The connection is the delivery's: hookinbox commits and releases it.
    },
  };
}
