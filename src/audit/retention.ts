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

/** Rows removed (or, dry, that would be) per retention kind. */
export interface RetentionCounts {
  payloads: number;
  events: number;
  receipts: number;
  rejected: number;
  dedup: number;
}

/** The windows a run applies (ms; null: that kind is kept forever). */
export interface RetentionWindows {
  readonly payloadsMs: number | null;
  readonly eventsMs: number | null;
  readonly receiptsMs: number | null;
  readonly rejectedMs: number;
  readonly dedupMs: number;
}

// Receipts before events: on SQLite an expiring event takes its remaining receipts with it.
const kinds = ["receipts", "rejected", "events", "dedup"] as const;

/**
 * One retention run: partitions made ahead (PostgreSQL), then payloads, whole events, accepted
 * receipts, rejected receipts and dedup keys older than their windows, each in short steps
 * (one batch or one partition) with a yield between them, so neither store holds a long lock.
 * `shouldStop` ends it between steps.
 *
 * @example
 * ```ts
 * const counts = await runRetention(store, config.retention, { now: Date.now(), dryRun: true });
 * ```
 */
export async function runRetention(
  store: Pick<Store, "purgePayloads" | "retentionStep" | "maintainPartitions">,
  windows: RetentionWindows,
  options: { now: number; dryRun: boolean; batchSize?: number; shouldStop?: () => boolean },
): Promise<RetentionCounts> {
  const limit = options.batchSize ?? 500;
  const counts: RetentionCounts = { payloads: 0, events: 0, receipts: 0, rejected: 0, dedup: 0 };
  if (!options.dryRun) await store.maintainPartitions(options.now);
  if (windows.payloadsMs !== null) {
    counts.payloads = await purgeOldPayloads(store, {
      payloadsMs: windows.payloadsMs,
      now: options.now,
      dryRun: options.dryRun,
      batchSize: limit,
    });
  }
  const windowOf = {
    events: windows.eventsMs,
    receipts: windows.receiptsMs,
    rejected: windows.rejectedMs,
    dedup: windows.dedupMs,
  };
  for (const kind of kinds) {
    const windowMs = windowOf[kind];
    if (windowMs === null) continue;
    let cursor: string | null = "";
    while (cursor !== null && !options.shouldStop?.()) {
      const step = await store.retentionStep({
        kind,
        before: options.now - windowMs,
        cursor,
        limit,
        now: options.now,
        dryRun: options.dryRun,
      });
      counts[kind] += step.removed;
      cursor = step.cursor;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return counts;
}
