import type { Logger } from "../log.ts";
import type { Store } from "../store/types.ts";
import { type RetentionCounts, type RetentionWindows, runRetention } from "./retention.ts";

/** How often the sweep runs. */
const sweepIntervalMs = 3_600_000;

/** A running retention schedule. */
export interface RetentionSchedule {
  /** Runs one sweep now (or joins the one under way); resolves with what it removed. */
  sweep(): Promise<RetentionCounts>;
  /** Stops the schedule and waits for a sweep under way (it ends after its current step). */
  stop(): Promise<void>;
}

/**
 * Runs retention (src/audit/retention.ts) once at start, then hourly, in the gateway or worker
 * process: partitions ahead, payloads, events, receipts, rejected receipts and dedup keys past
 * their windows, in short steps. A failed sweep is logged and tried again an hour later.
 *
 * @example
 * ```ts
 * const retention = startRetention({ store, windows: config.retention, now: Date.now });
 * await retention.stop();
 * ```
 */
export function startRetention(options: {
  store: Pick<Store, "purgePayloads" | "retentionStep" | "maintainPartitions" | "auditSequence">;
  windows: RetentionWindows;
  now: () => number;
  logger?: Logger;
  /** false: no sweep at start nor hourly, only `sweep()` on demand (default true). */
  scheduled?: boolean;
}): RetentionSchedule {
  let running: Promise<RetentionCounts> | null = null;
  let stopped = false;
  const sweepOnce = async (): Promise<RetentionCounts> => {
    const counts = await runRetention(options.store, options.windows, {
      now: options.now(),
      dryRun: false,
      batchSize: 1_000,
      shouldStop: () => stopped,
    });
    if (Object.values(counts).some((n) => n > 0))
      options.logger?.info(counts, "retention removed old rows");
    return counts;
  };
  const sweep = (): Promise<RetentionCounts> => {
    running ??= sweepOnce().finally(() => {
      running = null;
    });
    return running;
  };
  const scheduled = () =>
    void sweep().catch((error: unknown) =>
      options.logger?.warn(
        { err: (error as Error).message },
        "retention sweep failed; next try in an hour",
      ),
    );
  const timer = options.scheduled === false ? null : setInterval(scheduled, sweepIntervalMs);
  timer?.unref?.();
  if (timer) scheduled();
  return {
    sweep,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
