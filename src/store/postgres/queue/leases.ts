import type pg from "pg";
import { withRetry } from "../connection.ts";
import type { SchemaNames } from "../schema-names.ts";

/**
 * Hands claimed deliveries back unrun (`$1` ids, `$2` the worker holding them): pending again at
 * `$3`, their attempt undone (the count and the attempt row), `updated_at = $4`; returns `n`, how
 * many. Releasing at shutdown and deferring for a destination's limits both use it. A deferral
 * (`deferral`) also takes `$5`, postponed by the circuit breaker: then each delivery is marked to
 * wait for its destination's circuit, unless that circuit is closed by now (a close that
 * committed after the caller looked), in which case it is due at `$4`, unmarked.
 *
 * @example
 * ```ts
 * await pool.query(unclaimSql(t), [ids, workerId, runAt, now]);
 * ```
 */
export const unclaimSql = (t: SchemaNames, deferral = false) => {
  const waits = `$5::boolean AND EXISTS (SELECT 1 FROM ${t.destinations} x
                   WHERE x.name = d.target AND x.open_until IS NOT NULL)`;
  const runAt = deferral
    ? `run_at = CASE WHEN $5::boolean AND NOT (${waits}) THEN $4::bigint ELSE $3::bigint END,
           circuit_wait = ${waits}`
    : "run_at = $3";
  return `
  WITH unclaimed AS (
    UPDATE ${t.deliveries} d SET status = 'pending', attempts = attempts - 1, lease_owner = NULL,
           lease_expires_at = NULL, updated_at = $4, ${runAt}
    WHERE id = ANY($1::text[]) AND status = 'running' AND lease_owner = $2
    RETURNING id, attempts + 1 AS attempt
  ), dropped AS (
    DELETE FROM ${t.attempts} a USING unclaimed u WHERE a.delivery_id = u.id AND a.attempt = u.attempt
  )
  SELECT count(*)::int AS n FROM unclaimed`;
};

/**
 * The lease operations: release of unstarted claims and rescue of expired leases (heartbeats
 * and abandoned handlers are core's: core/queue-writes.ts).
 *
 * @example
 * ```ts
 * await leasesPostgres(pool, schemaNames("hookinbox")).rescue(Date.now());
 * ```
 */
export function leasesPostgres(pool: pg.Pool, t: SchemaNames) {
  return {
    async release(workerId: string, ids: readonly string[], now: number): Promise<number> {
      if (ids.length === 0) return 0;
      const { rows } = await withRetry(() =>
        pool.query(unclaimSql(t), [ids, workerId, Math.floor(now), Math.floor(now)]),
      );
      return rows[0]?.n ?? 0;
    },
    async rescue(now: number): Promise<number> {
      const { rows } = await withRetry(() =>
        pool.query(
          `WITH expired AS (
             UPDATE ${t.deliveries} SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, run_at = $1,
                    last_error = 'lease expired (worker crashed or stalled)', updated_at = $1
             WHERE status = 'running' AND lease_expires_at < $1
             RETURNING id, attempts
           ), ended AS (
             UPDATE ${t.attempts} a SET ended_at = $1, outcome = 'lease-expired', error_message = 'lease expired'
             FROM expired e WHERE a.delivery_id = e.id AND a.attempt = e.attempts AND a.outcome = 'running'
           )
           SELECT count(*)::int AS n FROM expired`,
          [Math.floor(now)],
        ),
      );
      return rows[0]?.n ?? 0;
    },
  };
}
