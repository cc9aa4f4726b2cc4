import type Database from "better-sqlite3";
import {
  destinationColumns as columns,
  type DestinationRow,
  toDestinationState,
} from "../core/views.ts";
import type { AttemptResponse, DestinationState, DestinationStateRow } from "../forward-types.ts";

/**
 * Prepares the destination writes that change deliveries too, each run inside the caller's
 * (group) transaction: state changes, closing a circuit, waking deliveries, and
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
