import type { RetentionStore } from "../retention-types.ts";

const dayMs = 86_400_000;

/** How many days ahead the upkeep keeps partitions (and one day back, for clocks running late). */
const partitionDaysAhead = 7;

/**
 * What a driver gives core for partition upkeep: `partitioned: false` (SQLite) has no
 * partitions; `partitioned: true` (PostgreSQL) makes the day partitions of every UTC day from
 * `fromMs` to `toMs` that do not exist yet (bounds from src/ids.ts, plain DDL), answering how
 * many it made.
 *
 * @example
 * ```ts
 * const driver: PartitionDriver = { partitioned: true, ensurePartitions: (from, to) => ensure(from, to) };
 * ```
 */
export type PartitionDriver =
  | { readonly partitioned: false }
  | {
      readonly partitioned: true;
      ensurePartitions(fromMs: number, toMs: number): Promise<number>;
    };

/**
 * The worker's partition upkeep once for both stores: the days from yesterday to a week ahead
 * where the store partitions by day, nothing (0) where it does not.
 *
 * @example
 * ```ts
 * await partitionUpkeep(driver).maintainPartitions(Date.now()); // partitions made
 * ```
 */
export function partitionUpkeep(
  driver: PartitionDriver,
): Pick<RetentionStore, "maintainPartitions"> {
  return {
    maintainPartitions: async (now) =>
      driver.partitioned
        ? driver.ensurePartitions(now - dayMs, now + partitionDaysAhead * dayMs)
        : 0,
  };
}
