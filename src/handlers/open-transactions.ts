import type { TransactionClient } from "../store/queue-types.ts";

/**
 * The `tx` objects whose handler work is running now. On globalThis under a registered symbol, so
 * that two copies of hookinbox in one process (its ESM and CommonJS builds, or two versions) agree
 * on which transactions are open.
 */
const registryKey = Symbol.for("hookinbox.openTransactions");
const holder = globalThis as { [registryKey]?: WeakSet<object> };
holder[registryKey] ??= new WeakSet<object>();
const open: WeakSet<object> = holder[registryKey];

/**
 * Runs `work` with `tx` recorded as open, and forgets it when `work` settles (the commit follows).
 *
 * @example
 * ```ts
 * await store.completeDelivery(input, (tx) => whileOpen(tx, work));
 * ```
 */
export async function whileOpen<T>(
  tx: TransactionClient,
  work: (tx: TransactionClient) => Promise<T>,
): Promise<T> {
  open.add(tx);
  try {
    return await work(tx);
  } finally {
    open.delete(tx);
  }
}

/**
 * Whether `value` is a `tx` from `ctx.transaction` whose work is still running.
 *
 * @example
 * ```ts
 * if (!isOpenTransaction(tx)) throw hookinboxError("HOOKINBOX_PRISMA_NO_TRANSACTION");
 * ```
 */
export function isOpenTransaction(value: unknown): value is TransactionClient {
  return typeof value === "object" && value !== null && open.has(value);
}
