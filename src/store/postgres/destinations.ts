import type pg from "pg";
import type { AlertRecord } from "../alert-types.ts";
import { destinationColumns, toDestinationState } from "../core/views.ts";
import type { AttemptResponse, DestinationState, DestinationStateRow } from "../forward-types.ts";
import { recordAlertsIn } from "./alert-outbox.ts";
import { withRetry, withTransaction } from "./connection.ts";
import { unclaimSql } from "./queue/leases.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * The destination operations on PostgreSQL (see DestinationStore): each is one statement, so
 * every process sharing the schema sees one state, one circuit and one rate window per
 * destination. Table names are qualified with the store's schema (`schemaNames`).
 *
 * @example
 * ```ts
 * const destinations = destinationsPostgres(pool, schemaNames("hookinbox"));
 * await destinations.takeRateSlot("app", 1_700_000_000_000, 50);
 * ```
 */
export function destinationsPostgres(pool: pg.Pool, t: SchemaNames) {
  const cols = destinationColumns;
  const query = (text: string, values: unknown[]) =>
    withRetry(() => pool.query(text, values)).then((r) => r.rows);
  return {
    async ensureDestinations(names: readonly string[]): Promise<void> {
      if (names.length === 0) return;
      await query(
        `INSERT INTO ${t.destinations} (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING`,
        [names],
      );
    },
    async listDestinationStates(): Promise<DestinationStateRow[]> {
      return (await query(`SELECT ${cols} FROM ${t.destinations} ORDER BY name`, [])).map(
        toDestinationState,
      );
    },
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
             open_until = CASE WHEN $2 = 'active' THEN NULL ELSE open_until END
           WHERE name = $1 RETURNING ${cols}
         ), woken AS (
           UPDATE ${t.deliveries} SET run_at = $4, updated_at = $4
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
    async countRunning(targets: readonly string[]): Promise<Record<string, number>> {
      const counts: Record<string, number> = {};
      if (targets.length === 0) return counts;
      const rows = await query(
        // The running rows first, behind OFFSET 0 (an index on status serves them), then their
        // targets: with both conditions together PostgreSQL may read every delivery of the target
        // by deliveries_target_id instead, and does when its statistics say the table is small.
        `SELECT r.target, count(*)::int AS n
         FROM (SELECT target FROM ${t.deliveries} WHERE status = 'running' OFFSET 0) r
         WHERE r.target = ANY($1::text[]) GROUP BY r.target`,
        [targets],
      );
      for (const row of rows) counts[row.target] = row.n;
      return counts;
    },
    async takeRateSlot(name: string, windowStart: number, limit: number): Promise<boolean> {
      const rows = await query(
        `UPDATE ${t.destinations}
         SET rate_count = CASE WHEN rate_window = $2 THEN rate_count + 1 ELSE 1 END, rate_window = $2
         WHERE name = $1 AND (rate_window <> $2 OR rate_count < $3) RETURNING 1`,
        [name, Math.floor(windowStart), limit],
      );
      return rows.length === 1;
    },
    async takeProbe(name: string, now: number, cooldownMs: number): Promise<boolean> {
      const at = Math.floor(now);
      const rows = await query(
        `UPDATE ${t.destinations} SET open_until = $3
         WHERE name = $1 AND open_until IS NOT NULL AND open_until <= $2 RETURNING 1`,
        [name, at, at + cooldownMs],
      );
      return rows.length === 1;
    },
    async recordCircuit(
      name: string,
      ok: boolean,
      now: number,
      threshold: number,
      cooldownMs: number,
    ): Promise<DestinationStateRow | null> {
      const rows = ok
        ? await query(
            `UPDATE ${t.destinations} SET failures = 0, open_until = NULL WHERE name = $1 RETURNING ${cols}`,
            [name],
          )
        : await query(
            `UPDATE ${t.destinations} SET failures = failures + 1,
               open_until = CASE WHEN failures + 1 >= $2 THEN $3 ELSE open_until END
             WHERE name = $1 RETURNING ${cols}`,
            [name, threshold, Math.floor(now) + cooldownMs],
          );
      return rows[0] ? toDestinationState(rows[0]) : null;
    },
    async deferDeliveries(
      workerId: string,
      ids: readonly string[],
      runAt: number,
      now: number,
    ): Promise<number> {
      if (ids.length === 0) return 0;
      const rows = await query(unclaimSql(t), [ids, workerId, Math.floor(runAt), Math.floor(now)]);
      return rows[0]?.n ?? 0;
    },
    async recordAttemptResponse(
      deliveryId: string,
      attempt: number,
      r: AttemptResponse,
    ): Promise<void> {
      await query(
        `UPDATE ${t.attempts} SET response_status = $3, response_headers = $4, response_body = $5,
           latency_ms = $6, error_class = $7
         WHERE delivery_id = $1 AND attempt = $2`,
        [
          deliveryId,
          attempt,
          r.status,
          r.headers === null ? null : JSON.stringify(r.headers),
          r.body,
          Math.round(r.latencyMs),
          r.errorClass,
        ],
      );
    },
  };
}
