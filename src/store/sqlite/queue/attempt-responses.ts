import type Database from "better-sqlite3";
import type { AttemptResponse } from "../../forward-types.ts";

/**
 * Prepares the write of what a destination answered onto its attempt's row, run inside the
 * caller's (group) transaction beside the attempt's end (PostgreSQL writes the same columns in
 * its end statement: postgres/queue/attempt-responses.ts).
 *
 * @example
 * ```ts
 * const record = prepareAttemptResponses(db);
 * record("dlv_1", 1, { status: 200, headers: null, body: null, latencyMs: 12, errorClass: null });
 * ```
 */
export function prepareAttemptResponses(db: Database.Database) {
  const response = db.prepare(
    `UPDATE attempts SET response_status = @status, response_headers = @headers, response_body = @body,
       latency_ms = @latencyMs, error_class = @errorClass, request_bytes = @requestBytes,
       request_sha256 = @requestSha256, filtered = @filtered
     WHERE delivery_id = @deliveryId AND attempt = @attempt`,
  );
  return (deliveryId: string, attempt: number, r: AttemptResponse): void => {
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
  };
}
