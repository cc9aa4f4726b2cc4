import type pg from "pg";
import { withRetry } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * The events of `sources` stored under `dedupKey`, newest first, read from event_dedup: events
 * is partitioned by day and keeps no (source, dedup_key) index; the keys are kept for
 * retention.dedup. The dashboard's other reads are core's (core/dashboard-reads.ts).
 *
 * @example
 * ```ts
 * await eventIdsByDedupKeyPostgres(pool, schemaNames("hookinbox"), ["stripe"], "evt_1");
 * ```
 */
export async function eventIdsByDedupKeyPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  sources: readonly string[],
  dedupKey: string,
): Promise<string[]> {
  if (sources.length === 0) return [];
  const { rows } = await withRetry(() =>
    pool.query<{ id: string }>(
      `SELECT event_id AS id FROM ${t.event_dedup} WHERE source = ANY($1::text[]) AND dedup_key = $2 ORDER BY event_id DESC`,
      [sources, dedupKey],
    ),
  );
  return rows.map((row) => row.id);
}
