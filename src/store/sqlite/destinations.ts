import type Database from "better-sqlite3";
import {
  destinationColumns as columns,
  type DestinationRow,
  toDestinationState,
} from "../core/views.ts";
import type { AttemptResponse, DestinationState, DestinationStateRow } from "../forward-types.ts";

/**
 * Prepares the destination writes that change deliveries too, each run inside the caller's
 * (group) transaction: state changes, closing a circuit, waking and deferring deliveries, and
 * the attempt's response record (the rate window and breaker counters are core's:
 * core/circuit-writes.ts).
 *
 * @example
 * ```ts
 * const ops = prepareDestinationWrites(db);
 * ops.setState("app", "paused", "maintenance", Date.now());
 * ```
 */
export function prepareDestinationWrites(db: Database.Database) {
  const byName = db.prepare<[string], DestinationRow>(
    `SELECT ${columns} FROM destinations WHERE name = ?`,
  );
  const setState = db.prepare(
    `UPDATE destinations SET state = @state, reason = @reason, changed_at = @now,
       failures = CASE WHEN @state = 'active' THEN 0 ELSE failures END,
       open_until = CASE WHEN @state = 'active' THEN NULL ELSE open_until END,
       trials_taken = CASE WHEN @state = 'active' THEN 0 ELSE trials_taken END,
       trials_passed = CASE WHEN @state = 'active' THEN 0 ELSE trials_passed END,
       trials_until = CASE WHEN @state = 'active' THEN NULL ELSE trials_until END
     WHERE name = @name`,
  );
  // Parked deliveries (deferred while paused) become due at once on resume.
  const wake = db.prepare(
    `UPDATE deliveries SET run_at = @now, updated_at = @now, circuit_wait = 0
     WHERE status = 'pending' AND target = @name AND run_at > @now`,
  );
  const close = db.prepare(
    `UPDATE destinations SET open_until = NULL, failures = 0, trials_taken = 0, trials_passed = 0,
       trials_until = NULL, window_start = 0, window_calls = 0, window_failures = 0, prev_calls = 0,
       prev_failures = 0
     WHERE name = @name AND open_until = @openUntil`,
  );
  const wakeWaiting = db.prepare(
    `UPDATE deliveries SET run_at = min(run_at, @now), circuit_wait = 0, updated_at = @now
     WHERE id IN (SELECT id FROM deliveries INDEXED BY deliveries_circuit_wait
                  WHERE target = @name AND status = 'pending' AND circuit_wait = 1)`,
  );
  const wakeSome = db.prepare(
    `UPDATE deliveries SET run_at = @now, updated_at = @now
     WHERE id IN (SELECT id FROM deliveries INDEXED BY deliveries_circuit_wait
                  WHERE target = @name AND status = 'pending' AND circuit_wait = 1 AND run_at > @now
                  ORDER BY run_at LIMIT @limit)`,
  );
  // Postponed by the breaker: marked to wait for the circuit, unless a close committed since the
  // caller looked (then due now, unmarked, as the close would have made it).
  const circuitOpen = `EXISTS (SELECT 1 FROM destinations x
                       WHERE x.name = deliveries.target AND x.open_until IS NOT NULL)`;
  const defer = db.prepare<[Record<string, unknown>], { id: string; attempt: number }>(
    `UPDATE deliveries
     SET status = 'pending', attempts = attempts - 1, lease_owner = NULL, lease_expires_at = NULL,
         updated_at = @now,
         run_at = CASE WHEN @circuit = 1 AND NOT (${circuitOpen}) THEN @now ELSE @runAt END,
         circuit_wait = @circuit = 1 AND (${circuitOpen})
     WHERE id IN (SELECT value FROM json_each(@ids)) AND status = 'running' AND lease_owner = @workerId
     RETURNING id, attempts + 1 AS attempt`,
  );
  const dropAttempt = db.prepare("DELETE FROM attempts WHERE delivery_id = ? AND attempt = ?");
  const response = db.prepare(
    `UPDATE attempts SET response_status = @status, response_headers = @headers, response_body = @body,
       latency_ms = @latencyMs, error_class = @errorClass, request_bytes = @requestBytes,
       request_sha256 = @requestSha256, filtered = @filtered
     WHERE delivery_id = @deliveryId AND attempt = @attempt`,
  );
  const current = (name: string) => {
    const row = byName.get(name);
    return row ? toDestinationState(row) : null;
  };
  return {
    setDestinationState(
      name: string,
      state: DestinationState,
      reason: string | null,
      now: number,
    ): DestinationStateRow | null {
      const at = Math.floor(now);
      if (setState.run({ name, state, reason, now: at }).changes === 0) return null;
      if (state === "active") wake.run({ name, now: at });
      return current(name);
    },
    closeCircuit(name: string, openUntil: number, now: number): number | null {
      if (close.run({ name, openUntil: Math.floor(openUntil) }).changes === 0) return null;
      return wakeWaiting.run({ name, now: Math.floor(now) }).changes;
    },
    wakeCircuitWaiting(name: string, now: number, limit: number): number {
      if (limit <= 0) return 0;
      return wakeSome.run({ name, now: Math.floor(now), limit }).changes;
    },
    deferDeliveries(
      workerId: string,
      ids: readonly string[],
      runAt: number,
      now: number,
      circuit = false,
    ): number {
      if (ids.length === 0) return 0;
      const rows = defer.all({
        workerId,
        ids: JSON.stringify(ids),
        runAt: Math.floor(runAt),
        now: Math.floor(now),
        circuit: circuit ? 1 : 0,
      });
      for (const row of rows) dropAttempt.run(row.id, row.attempt);
      return rows.length;
    },
    recordAttemptResponse(deliveryId: string, attempt: number, r: AttemptResponse): void {
      response.run({
        deliveryId,
        attempt,
        status: r.status,
        headers: r.headers === null ? null : JSON.stringify(r.headers),
        body: r.body,
        latencyMs: Math.round(r.latencyMs),
        errorClass: r.errorClass,
        requestBytes: r.request?.bytes ?? null,
        requestSha256: r.request?.sha256 ?? null,
        filtered: r.filtered === true ? 1 : 0,
      });
    },
  };
}
