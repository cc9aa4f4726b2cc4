import type pg from "pg";
import type { AlertRecord } from "../alert-types.ts";
import { destinationColumns, toDestinationState } from "../core/views.ts";
import type { DestinationState, DestinationStateRow } from "../forward-types.ts";
import { recordAlertsIn } from "./alert-outbox.ts";
import { withRetry, withTransaction } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * The destination operations on PostgreSQL that change deliveries too (see DestinationStore):
 * state changes, closing a circuit, waking deliveries; each is one statement, so
 * every process sharing the schema sees one state and one circuit per destination (the rate
 * window and breaker counters are core's: core/circuit-writes.ts). Table names are qualified with the store's schema (`schemaNames`). `notify` wakes
 * the workers of every process when a closing circuit made deliveries due.
 *
 * @example
 * ```ts
 * const destinations = destinationsPostgres(pool, schemaNames("hookinbox"));
 * await destinations.takeRateSlot("app", 1_700_000_000_000, 50);
 * ```
 */
export function destinationsPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  notify: () => Promise<void> = async () => undefined,
) {
  const cols = destinationColumns;
  const query = (text: string, values: unknown[]) =>
    withRetry(() => pool.query(text, values)).then((r) => r.rows);
  return {
    async setDestinationState(
      name: string,
      state: DestinationState,
      reason: string | null,
      now: number,
      alert?: AlertRecord,
    ): Promise<DestinationStateRow | null> {
      const text = `WITH changed AS (
           UPDATE ${t.destinations} SET state = $2, reason = $3, changed_at = $4,
             failures = CASE WHEN $2 = 'active' THEN 0 ELSE failures END,
             open_until = CASE WHEN $2 = 'active' THEN NULL ELSE open_until END,
             trials_taken = CASE WHEN $2 = 'active' THEN 0 ELSE trials_taken END,
             trials_passed = CASE WHEN $2 = 'active' THEN 0 ELSE trials_passed END,
             trials_until = CASE WHEN $2 = 'active' THEN NULL ELSE trials_until END
           WHERE name = $1 RETURNING ${cols}
         ), woken AS (
           UPDATE ${t.deliveries} SET run_at = $4, updated_at = $4, circuit_wait = false
           WHERE $2 = 'active' AND status = 'pending' AND target = $1 AND run_at > $4
             AND EXISTS (SELECT 1 FROM changed)
         )
         SELECT * FROM changed`;
      const values = [name, state, reason, Math.floor(now)];
      if (!alert) {
        const rows = await query(text, values);
        return rows[0] ? toDestinationState(rows[0]) : null;
      }
      // With an alert: the state and its outbox row commit together, or neither does.
      return withTransaction(pool, async (client) => {
        const { rows } = await client.query(text, values);
        if (!rows[0]) return null;
        await recordAlertsIn(client, t, alert.occurrences, { now, windowMs: alert.windowMs });
        return toDestinationState(rows[0]);
      });
    },
    async closeCircuit(name: string, openUntil: number, now: number): Promise<number | null> {
      const rows = await query(
        `WITH closed AS (
           UPDATE ${t.destinations} SET open_until = NULL, failures = 0,
             trials_taken = 0, trials_passed = 0, trials_until = NULL, window_start = 0,
             window_calls = 0, window_failures = 0, prev_calls = 0, prev_failures = 0
           WHERE name = $1 AND open_until = $2 RETURNING name
         ), woken AS (
           UPDATE ${t.deliveries} SET run_at = LEAST(run_at, $3), circuit_wait = false, updated_at = $3
           WHERE target = $1 AND status = 'pending' AND circuit_wait AND EXISTS (SELECT 1 FROM closed)
           RETURNING 1
         )
         SELECT (SELECT count(*) FROM closed)::int AS closed, (SELECT count(*) FROM woken)::int AS woken`,
        [name, Math.floor(openUntil), Math.floor(now)],
      );
      if (rows[0]?.closed !== 1) return null;
      const woken: number = rows[0].woken;
      if (woken > 0) await notify().catch(() => undefined);
      return woken;
    },
    async wakeCircuitWaiting(name: string, now: number, limit: number): Promise<number> {
      if (limit <= 0) return 0;
      const rows = await query(
        `WITH woken AS (
           UPDATE ${t.deliveries} SET run_at = $2, updated_at = $2
           WHERE id IN (SELECT id FROM ${t.deliveries}
                        WHERE target = $1 AND status = 'pending' AND circuit_wait AND run_at > $2
                        ORDER BY run_at LIMIT $3)
             AND status = 'pending'
           RETURNING 1
         )
         SELECT count(*)::int AS n FROM woken`,
        [name, Math.floor(now), limit],
      );
      const woken: number = rows[0]?.n ?? 0;
      if (woken > 0) await notify().catch(() => undefined);
      return woken;
    },
  };
}
