import type pg from "pg";
import { withRetry } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

const dayMs = 86_400_000;

/** How many days ahead the worker keeps partitions (and one day back, for clocks running late). */
export const partitionDaysAhead = 7;

/** PostgreSQL's "no partition of relation … found for row" (check_violation). */
const isMissingPartition = (error: unknown): boolean =>
  (error as { code?: unknown }).code === "23514" &&
  /no partition of relation/.test(String((error as { message?: unknown }).message));

/**
 * Creates the day partitions (events, accepted and rejected receipts) of every UTC day from
 * `fromMs` to `toMs`, skipping those that exist; returns how many it made. Creating a partition
 * locks its parent briefly, so it waits at most 5 s for the lock and otherwise fails (the next
 * run tries again).
 *
 * @example
 * ```ts
 * await ensurePartitionsPostgres(pool, t, Date.now() - 86_400_000, Date.now() + 7 * 86_400_000);
 * ```
 */
export async function ensurePartitionsPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  fromMs: number,
  toMs: number,
): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SET LOCAL lock_timeout = '5s'");
    const { rows } = await client.query<{ made: number }>(
      `SELECT coalesce(sum(${t.hookinbox_ensure_partitions}(d)), 0)::int AS made
       FROM generate_series($1::bigint, $2::bigint, ${dayMs}) AS d`,
      [Math.floor(fromMs / dayMs) * dayMs, Math.floor(toMs)],
    );
    await client.query("COMMIT");
    return rows[0]?.made ?? 0;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * The worker's partition upkeep: the days from yesterday to a week ahead.
 *
 * @example
 * ```ts
 * await maintainPartitionsPostgres(pool, t, Date.now()); // partitions made
 * ```
 */
export function maintainPartitionsPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  now: number,
): Promise<number> {
  return withRetry(() =>
    ensurePartitionsPostgres(pool, t, now - dayMs, now + partitionDaysAhead * dayMs),
  );
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** The time (ms) in an `xxx_<ulid>` id's first 10 ULID characters: the partition it goes to. */
const idTime = (id: string): number =>
  [...id.slice(id.indexOf("_") + 1, id.indexOf("_") + 11)].reduce(
    (ms, c) => ms * 32 + crockford.indexOf(c),
    0,
  );

/**
 * Runs an insert of rows with these ids (with withRetry), and when the day of one has no
 * partition yet (the worker was down for a week, or a clock is far off), makes the days of all
 * of them and runs the insert again. The day comes from the id, not the receive time: ids are
 * monotonic, so after a clock step back an id carries the later time.
 *
 * @example
 * ```ts
 * await withPartition(pool, t, [eventId, receiptId], () => pool.query(insertSql, values));
 * ```
 */
export function withPartition<T>(
  pool: pg.Pool,
  t: SchemaNames,
  ids: readonly string[],
  work: () => Promise<T>,
): Promise<T> {
  return withRetry(async () => {
    try {
      return await work();
    } catch (error) {
      if (!isMissingPartition(error)) throw error;
      for (const day of new Set(ids.map(idTime))) await ensurePartitionsPostgres(pool, t, day, day);
      return work();
    }
  });
}
