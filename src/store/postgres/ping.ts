import type pg from "pg";
import { withRetry } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * The heartbeat write of `ping()`: it rewrites one row at the store's clock, so a resolved ping
 * proves a real write reaches a durable COMMIT (what /readyz must know).
 *
 * @example
 * ```ts
 * await pingPostgres(pool, schemaNames("hookinbox"), Date.now);
 * ```
 */
export async function pingPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  now: () => number,
): Promise<void> {
  await withRetry(() =>
    pool.query(
      `INSERT INTO ${t.hookinbox_heartbeat} (id, at) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET at = excluded.at`,
      [Math.floor(now())],
    ),
  );
}
