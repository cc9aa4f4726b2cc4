import type { AttemptResponse, DestinationState, DestinationStateRow } from "../forward-types.ts";
import type { AttemptOutcome, AttemptView, DeliveryStatus, DeliveryView } from "../queue-types.ts";

/**
 * A deliveries row as both drivers select it (with the event's source and type). SQLite returns
 * booleans as 0/1 and JSON as text; PostgreSQL as booleans and parsed objects.
 */
export interface DeliveryRow {
  id: string;
  event_id: string;
  target: string;
  status: DeliveryStatus;
  ordering_key: string | null;
  version: number | null;
  attempts: number;
  run_at: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  last_error: string | null;
  is_replay: boolean | 0 | 1;
  replay_of: string | null;
  created_at: number;
  completed_at: number | null;
  source: string;
  type: string | null;
}

/** An attempts row as both drivers select it. */
export interface AttemptRow {
  id: string;
  attempt: number;
  worker_id: string | null;
  started_at: number;
  ended_at: number | null;
  outcome: AttemptOutcome;
  error_message: string | null;
  error_stack: string | null;
  response_status: number | null;
  response_headers: string | Record<string, string> | null;
  response_body: string | null;
  latency_ms: number | null;
  error_class: string | null;
  request_bytes: number | null;
  request_sha256: string | null;
  filtered: boolean | 0 | 1;
}

/** The attempts columns `toAttemptView` reads. */
export const attemptColumns = `id, attempt, worker_id, started_at, ended_at, outcome, error_message,
  error_stack, response_status, response_headers, response_body, latency_ms, error_class,
  request_bytes, request_sha256, filtered`;

/**
 * A millisecond time as ISO 8601 (`null` stays `null`).
 *
 * @example
 * ```ts
 * isoTime(0); // "1970-01-01T00:00:00.000Z"
 * ```
 */
export function isoTime(ms: number): string;
export function isoTime(ms: number | null): string | null;
export function isoTime(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/**
 * Maps a deliveries row to its API view (times as ISO strings), for either driver.
 *
 * @example
 * ```ts
 * const view = toDeliveryView(row, attempts.map(toAttemptView));
 * ```
 */
export function toDeliveryView(row: DeliveryRow, attemptLog?: AttemptView[]): DeliveryView {
  return {
    id: row.id,
    eventId: row.event_id,
    source: row.source,
    type: row.type,
    target: row.target,
    status: row.status,
    orderingKey: row.ordering_key,
    version: row.version,
    attempts: row.attempts,
    runAt: isoTime(row.run_at),
    leaseOwner: row.lease_owner,
    leaseExpiresAt: isoTime(row.lease_expires_at),
    lastError: row.last_error,
    isReplay: row.is_replay === true || row.is_replay === 1,
    replayOf: row.replay_of,
    createdAt: isoTime(row.created_at),
    completedAt: isoTime(row.completed_at),
    ...(attemptLog ? { attemptLog } : {}),
  };
}

/**
 * Maps an attempts row to its view, with the forward's response when it recorded one.
 *
 * @example
 * ```ts
 * const log = rows.map(toAttemptView);
 * ```
 */
export function toAttemptView(row: AttemptRow): AttemptView {
  return {
    id: row.id,
    attempt: row.attempt,
    workerId: row.worker_id,
    startedAt: isoTime(row.started_at),
    endedAt: isoTime(row.ended_at),
    outcome: row.outcome,
    errorMessage: row.error_message,
    errorStack: row.error_stack,
    ...attemptResponse(row),
  };
}

/**
 * The `response` of an attempt view, when the attempt was a forward that recorded one.
 *
 * @example
 * ```ts
 * const view = { ...rest, ...attemptResponse(row) };
 * ```
 */
export function attemptResponse(
  row: Pick<
    AttemptRow,
    "response_status" | "response_headers" | "response_body" | "latency_ms" | "error_class"
  > &
    Partial<Pick<AttemptRow, "request_bytes" | "request_sha256" | "filtered">>,
): { response?: AttemptResponse } {
  if (row.latency_ms === null) return {};
  return {
    response: {
      status: row.response_status,
      headers:
        typeof row.response_headers === "string"
          ? (JSON.parse(row.response_headers) as Record<string, string>)
          : row.response_headers,
      body: row.response_body,
      latencyMs: row.latency_ms,
      errorClass: row.error_class,
      ...(row.request_bytes == null || row.request_sha256 == null
        ? {}
        : { request: { bytes: row.request_bytes, sha256: row.request_sha256 } }),
      ...(row.filtered ? { filtered: true } : {}),
    },
  };
}

/** The destinations columns `toDestinationState` reads. */
export const destinationColumns =
  "name, state, reason, changed_at, failures, open_until, window_start, window_calls, window_failures, prev_calls, prev_failures, trials_taken, trials_passed, trials_until";

/** A destinations row as both drivers select it. */
export interface DestinationRow {
  name: string;
  state: DestinationState;
  reason: string | null;
  changed_at: number | null;
  failures: number;
  open_until: number | null;
  window_start: number;
  window_calls: number;
  window_failures: number;
  prev_calls: number;
  prev_failures: number;
  trials_taken: number;
  trials_passed: number;
  trials_until: number | null;
}

/**
 * Maps a destinations row to its view (PostgreSQL's bigints arrive as strings).
 *
 * @example
 * ```ts
 * toDestinationState(row).openUntil; // null: the circuit is closed
 * ```
 */
export function toDestinationState(row: DestinationRow): DestinationStateRow {
  const time = (v: number | string | null) => (v === null ? null : Number(v));
  return {
    name: row.name,
    state: row.state,
    reason: row.reason,
    changedAt: time(row.changed_at),
    failures: row.failures,
    openUntil: time(row.open_until),
    window: {
      start: Number(row.window_start),
      calls: row.window_calls,
      failures: row.window_failures,
      prevCalls: row.prev_calls,
      prevFailures: row.prev_failures,
    },
    trials: {
      taken: row.trials_taken,
      passed: row.trials_passed,
      until: time(row.trials_until),
    },
  };
}
