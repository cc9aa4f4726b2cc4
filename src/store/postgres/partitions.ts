import type pg from "pg";
import { idTime, ulidTimePrefix } from "../../ids.ts";
import { withRetry } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

const dayMs = 86_400_000;

/** PostgreSQL's "no partition of relation … found for row" (check_violation). */
const isMissingPartition = (error: unknown): boolean =>
  (error as { code?: unknown }).code === "23514" &&
  /no partition of relation/.test(String((error as { message?: unknown }).message));

/** The partitioned tables that get a partition per UTC day, and their ids' prefix. */
const dayParents = [
  { parent: "events", idPrefix: "evt_" },
  { parent: "receipts_accepted", idPrefix: "rcp_" },
  { parent: "receipts_rejected", idPrefix: "rcp_" },
] as const;

/** One day partition: its qualified name and the DDL that makes it. */
export interface DayPartition {
  /** `"schema".events_pYYYYMMDD`, as `to_regclass` takes it. */
  readonly name: string;
  readonly sql: string;
}

/**
 * The day partitions (events, accepted and rejected receipts) of the UTC day holding `atMs`, as
 * plain DDL. The bounds are the day's ULID time prefixes from src/ids.ts (every id minted in
 * that day sorts between them), the names `<parent>_pYYYYMMDD`: those migration 009 gave the
 * partitions it made, so partitions made before and after migration 016 are one series.
 *
 * @example
 * ```ts
 * dayPartitions(schemaNames("hookinbox"), Date.UTC(2026, 5, 1))[0]?.sql;
 * // CREATE TABLE "hookinbox".events_p20260601 PARTITION OF "hookinbox".events
 * //   FOR VALUES FROM ('evt_01KT07NV00') TO ('evt_01KT2T2J00')
 * ```
 */
export function dayPartitions(t: SchemaNames, atMs: number): DayPartition[] {
  const lo = Math.floor(Math.max(atMs, 0) / dayMs) * dayMs;
  const suffix = new Date(lo).toISOString().slice(0, 10).replaceAll("-", "");
  const [from, to] = [ulidTimePrefix(lo), ulidTimePrefix(lo + dayMs)];
  return dayParents.map(({ parent, idPrefix }) => {
    const name = `${t.schema}.${parent}_p${suffix}`;
    return {
      name,
      sql: `CREATE TABLE ${name} PARTITION OF ${t[parent]} FOR VALUES FROM ('${idPrefix}${from}') TO ('${idPrefix}${to}')`,
    };
  });
}

/**
 * A partition that could not be made because it is not needed: its day is covered by another
 * partition (events_legacy, 42P17), or a concurrent caller made it first (42P07, or 23505 on
 * the catalog when both created it at once).
 */
const isCoveredOrMade = (error: unknown): boolean =>
  ["42P17", "42P07", "23505"].includes(String((error as { code?: unknown }).code));

/**
 * Creates the day partitions (events, accepted and rejected receipts) of every UTC day from
 * `fromMs` to `toMs` that do not exist yet, with plain DDL (`dayPartitions`); returns how many
 * it made. Creating a partition locks its parent briefly, so it waits at most 5 s for the lock
 * and otherwise fails (the next run tries again). Each CREATE runs under a savepoint, so one
 * that is covered or raced leaves the others to go on.
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
  const wanted = new Map<string, string>();
  for (let day = Math.floor(Math.max(fromMs, 0) / dayMs) * dayMs; day <= toMs; day += dayMs)
    for (const { name, sql } of dayPartitions(t, day)) wanted.set(name, sql);
  if (wanted.size === 0) return 0;
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SET LOCAL lock_timeout = '5s'");
    const { rows } = await client.query<{ name: string }>(
      "SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(name) IS NULL",
      [[...wanted.keys()]],
    );
    let made = 0;
    for (const { name } of rows) {
      try {
        await client.query(`SAVEPOINT partition; ${wanted.get(name)}; RELEASE SAVEPOINT partition`);
        made += 1;
      } catch (error) {
        if (!isCoveredOrMade(error)) throw error;
        await client.query("ROLLBACK TO SAVEPOINT partition");
      }
    }
    await client.query("COMMIT");
    return made;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

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
