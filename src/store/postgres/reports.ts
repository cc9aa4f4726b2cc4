import type pg from "pg";
import { withRetry } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * Confirms the dead-letter alerts of `ids` (the alert hook returned): marks the dead deliveries
 * not marked yet. The reports themselves are core's (core/report-reads.ts).
 *
 * @example
 * ```ts
 * await markAlertedPostgres(pool, schemaNames("hookinbox"), ["dlv_…"], Date.now());
 * ```
 */
export async function markAlertedPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  ids: readonly string[],
  now: number,
): Promise<void> {
  if (ids.length === 0) return;
  await withRetry(() =>
    pool.query(
      `UPDATE ${t.deliveries} SET alerted_at = $2 WHERE id = ANY($1::text[]) AND status = 'dead' AND alerted_at IS NULL`,
      [ids, Math.floor(now)],
    ),
  );
}
