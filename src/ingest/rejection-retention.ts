import type { Logger } from "../log.ts";
import type { Store } from "../store/types.ts";

/** How often the sweep runs, and how many rows one delete removes. */
const sweepIntervalMs = 3_600_000;
const batchSize = 1_000;

/** A running retention sweep of rejected receipts. */
export interface RejectionRetention {
  /** Runs one sweep now (batches until nothing old is left); resolves with the rows deleted. */
  sweep(): Promise<number>;
  /** Stops the schedule and waits for a sweep under way. */
  stop(): Promise<void>;
}

/**
 * Deletes rejected receipts older than `retentionMs`: once at start, then hourly, in batches of
 * 1,000 oldest-first deletes with a pause between them, so neither a backlog nor a busy store
 * turns it into one long write. Accepted receipts are never touched.
 *
 * @example
 * ```ts
 * const retention = startRejectionRetention({ store, retentionMs: 7 * 86_400_000, now: Date.now });
 * await retention.stop();
 * ```
 */
export function startRejectionRetention(options: {
  store: Pick<Store, "pruneRejections">;
  retentionMs: number;
  now: () => number;
  logger?: Logger;
}): RejectionRetention {
  let running: Promise<number> | null = null;
  let stopped = false;
  const sweepOnce = async (): Promise<number> => {
    const before = options.now() - options.retentionMs;
    let deleted = 0;
    while (!stopped) {
      const removed = await options.store.pruneRejections(before, batchSize);
      deleted += removed;
      if (removed < batchSize) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (deleted > 0) options.logger?.info({ deleted }, "deleted old rejected receipts");
    return deleted;
  };
  const sweep = (): Promise<number> => {
    running ??= sweepOnce().finally(() => {
      running = null;
    });
    return running;
  };
  const scheduled = () =>
    void sweep().catch((error: unknown) =>
      options.logger?.warn(
        { err: (error as Error).message },
        "rejected receipts retention sweep failed; next try in an hour",
      ),
    );
  const timer = setInterval(scheduled, sweepIntervalMs);
  timer.unref?.();
  scheduled();
  return {
    sweep,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
