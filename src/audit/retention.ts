import { setTimeout as sleep } from "node:timers/promises";
import type { Store } from "../store/types.ts";
import { sequenceAll } from "./sequencer.ts";

/**
 * What a run waits between two batches. With `pauseMs` 0, one turn of the event loop (the batches
 * go through the store's own group commit, beside its other writes). With `pauseMs` > 0, as long as
 * the batch took and at least `pauseMs`: a run in a process of its own (`hookinbox retention run`
 * from cron) competes with the gateway's SQLite writer for the file's one write lock, and SQLite
 * makes a waiting writer sleep up to 100 ms between tries, so back-to-back batches kept it out
 * (an 8-minute soak at 2,000 req/s had accept p99 at 1.8–2.4 s while 120,000 payloads a minute
 * were purged). A pause of at least 100 ms lets every waiter in.
 */
async function pauseAfter(started: number, pauseMs: number): Promise<void> {
  if (pauseMs <= 0) {
    await new Promise((resolve) => setImmediate(resolve));
    return;
  }
  await sleep(Math.max(pauseMs, performance.now() - started));
}

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
  options: {
    payloadsMs: number;
    now: number;
    dryRun: boolean;
    batchSize?: number;
    pauseMs?: number;
  },
): Promise<number> {
  const limit = options.batchSize ?? 500;
  let afterId: string | null = "";
  let purged = 0;
  while (afterId !== null) {
    const started = performance.now();
    const batch = await store.purgePayloads({
      before: options.now - options.payloadsMs,
      afterId,
      limit,
      now: options.now,
      dryRun: options.dryRun,
    });
    purged += batch.purged;
    afterId = batch.nextAfterId;
    if (afterId !== null) await pauseAfter(started, options.pauseMs ?? 0);
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
 * One retention run: the audit log's pending leaves sequenced first (PostgreSQL: every event it
 * may delete is in the tree before it goes), partitions made ahead (PostgreSQL), then payloads, whole events, accepted
 * receipts, rejected receipts and dedup keys older than their windows, each in short steps
 * (one batch or one partition) with a yield between them, so neither store holds a long lock.
 * `shouldStop` ends it between steps; `pauseMs` is for a run in a process of its own, beside a
 * gateway on the same SQLite file (see {@link pauseAfter}).
 *
 * @example
 * ```ts
 * const counts = await runRetention(store, config.retention, { now: Date.now(), dryRun: true });
 * ```
 */
export async function runRetention(
  store: Pick<Store, "purgePayloads" | "retentionStep" | "maintainPartitions" | "auditSequence">,
  windows: RetentionWindows,
  options: {
    now: number;
    dryRun: boolean;
    batchSize?: number;
    shouldStop?: () => boolean;
    pauseMs?: number;
  },
): Promise<RetentionCounts> {
  const limit = options.batchSize ?? 500;
  const counts: RetentionCounts = { payloads: 0, events: 0, receipts: 0, rejected: 0, dedup: 0 };
  if (!options.dryRun) {
    await sequenceAll(store);
    await store.maintainPartitions(options.now);
  }
  if (windows.payloadsMs !== null) {
    counts.payloads = await purgeOldPayloads(store, {
      payloadsMs: windows.payloadsMs,
      now: options.now,
      dryRun: options.dryRun,
      batchSize: limit,
      pauseMs: options.pauseMs ?? 0,
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
      const started = performance.now();
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
      if (cursor !== null) await pauseAfter(started, options.pauseMs ?? 0);
    }
  }
  return counts;
}
