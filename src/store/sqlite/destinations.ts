import type Database from "better-sqlite3";
import type { AttemptResponse } from "../forward-types.ts";

/**
 * Prepares the destination writes that change deliveries too, each run inside the caller's
 * (group) transaction: deferring deliveries, and the attempt's response record (the rate
 * window and breaker counters are core's: core/circuit-writes.ts; state changes, circuit
 * closes and wakes: core/destination-wakes.ts).
 *
 * @example
 * ```ts
 * const ops = prepareDestinationWrites(db);
 * ops.deferDeliveries("worker-1", ["dlv_1"], Date.now() + 1000, Date.now());
 * ```
 */
export function prepareDestinationWrites(db: Database.Database) {
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
  return {
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
