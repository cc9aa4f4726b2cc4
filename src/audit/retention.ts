import type { Store } from "../store/types.ts";

/**
 * Purges payloads older than `payloadsMs` in batches (each its own short transaction, with a
 * yield between them), from a primary-key cursor: never one long lock, never a table-wide
 * statement. Events with an unfinished (or dead-lettered) delivery keep their payload. Returns
 * how many events were purged, or would be with `dryRun`.
 *
 * @example
 * ```ts
 * await purgeOldPayloads(store, { payloadsMs: 30 * 86_400_000, now: Date.now(), dryRun: true });
 * ```
 */
export async function purgeOldPayloads(
  store: Pick<Store, "purgePayloads">,
  options: { payloadsMs: number; now: number; dryRun: boolean; batchSize?: number },
): Promise<number> {
  const limit = options.batchSize ?? 500;
  let afterId: string | null = "";
  let purged = 0;
  while (afterId !== null) {
    const batch = await store.purgePayloads({
      before: options.now - options.payloadsMs,
      afterId,
      limit,
      now: options.now,
      dryRun: options.dryRun,
    });
    purged += batch.purged;
    afterId = batch.nextAfterId;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return purged;
}
