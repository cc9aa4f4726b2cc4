import type pg from "pg";
import { withRetry } from "./connection.ts";
import { unclaimSql } from "./queue/leases.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * The destination operation on PostgreSQL that changes deliveries too (see DestinationStore):
 * deferring deliveries, one statement (the rate window and breaker counters are core's:
 * core/circuit-writes.ts; state changes, circuit closes and wakes: core/destination-wakes.ts).
 * Table names are qualified with the store's schema (`schemaNames`).
 *
 * @example
 * ```ts
 * const destinations = destinationsPostgres(pool, schemaNames("hookinbox"));
 * await destinations.deferDeliveries("worker-1", ["dlv_1"], Date.now() + 1000, Date.now());
 * ```
 */
export function destinationsPostgres(pool: pg.Pool, t: SchemaNames) {
  const query = (text: string, values: unknown[]) =>
    withRetry(() => pool.query(text, values)).then((r) => r.rows);
  return {
    async deferDeliveries(
      workerId: string,
      ids: readonly string[],
      runAt: number,
      now: number,
      circuit = false,
    ): Promise<number> {
      if (ids.length === 0) return 0;
      const rows = await query(unclaimSql(t, true), [
        ids,
        workerId,
        Math.floor(runAt),
        Math.floor(now),
        circuit,
      ]);
      return rows[0]?.n ?? 0;
    },
  };
}
