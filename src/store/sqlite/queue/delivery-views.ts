import type Database from "better-sqlite3";
import type { AttemptResponse } from "../../forward-types.ts";
import type {
  AttemptOutcome,
  AttemptView,
  DeliveryPage,
  DeliveryQuery,
  DeliveryStatus,
  DeliveryView,
} from "../../queue-types.ts";
import { decodeCursor, encodeCursor, pageLimit } from "../list-events.ts";

/** A deliveries row as selected by the views. */
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
  is_replay: 0 | 1;
  replay_of: string | null;
  created_at: number;
  completed_at: number | null;
  source: string;
  type: string | null;
}

interface AttemptRow {
  id: string;
  attempt: number;
  worker_id: string | null;
  started_at: number;
  ended_at: number | null;
  outcome: AttemptOutcome;
  error_message: string | null;
  error_stack: string | null;
  response_status: number | null;
  response_headers: string | null;
  response_body: string | null;
  latency_ms: number | null;
  error_class: string | null;
}

/**
 * The event's source and type beside each delivery (a primary-key lookup per row, so runbooks
 * and lists need no second round trip). Written for `FROM deliveries` without an alias.
 */
export const eventColumns = `(SELECT e.source FROM events e WHERE e.id = deliveries.event_id) AS source,
  (SELECT e.type FROM events e WHERE e.id = deliveries.event_id) AS type`;

/** The columns every delivery view selects. */
export const deliveryColumns = `id, event_id, target, status, ordering_key, version, attempts, run_at,
  lease_owner, lease_expires_at, last_error, is_replay, replay_of, created_at, completed_at,
  ${eventColumns}`;

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/**
 * Maps a deliveries row to its API view (times as ISO strings).
 *
 * @example
 * ```ts
 * const view = toDeliveryView(row);
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
    runAt: iso(row.run_at),
    leaseOwner: row.lease_owner,
    leaseExpiresAt: isoOrNull(row.lease_expires_at),
    lastError: row.last_error,
    isReplay: row.is_replay === 1,
    replayOf: row.replay_of,
    createdAt: iso(row.created_at),
    completedAt: isoOrNull(row.completed_at),
    ...(attemptLog ? { attemptLog } : {}),
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
export function attemptResponse(row: {
  response_status: number | null;
  response_headers: string | Record<string, string> | null;
  response_body: string | null;
  latency_ms: number | null;
  error_class: string | null;
}): { response?: AttemptResponse } {
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
    },
  };
}

const filters = ["status", "target", "eventId"] as const;
const columnOf = { status: "status", target: "target", eventId: "event_id" } as const;

/**
 * Prepares the delivery listings: `list` (newest first, filtered, cursor-paged; never more than
 * `limit` rows) and `ofEvent` (an event's deliveries with their attempt logs, for details).
 *
 * @example
 * ```ts
 * const views = prepareDeliveryViews(db);
 * views.list({ status: "dead", limit: 50 });
 * ```
 */
export function prepareDeliveryViews(db: Database.Database) {
  const statements = new Map<string, Database.Statement<[Record<string, unknown>], DeliveryRow>>();
  const ofEvent = db.prepare<[string], DeliveryRow>(
    `SELECT ${deliveryColumns} FROM deliveries WHERE event_id = ? ORDER BY id`,
  );
  const attemptsOf = db.prepare<[string], AttemptRow>(
    `SELECT id, attempt, worker_id, started_at, ended_at, outcome, error_message, error_stack,
            response_status, response_headers, response_body, latency_ms, error_class
     FROM attempts WHERE delivery_id = ? ORDER BY attempt`,
  );
  const byId = db.prepare<[string], DeliveryRow>(
    `SELECT ${deliveryColumns} FROM deliveries WHERE id = ?`,
  );
  const attemptLog = (id: string): AttemptView[] =>
    attemptsOf.all(id).map((a) => ({
      id: a.id,
      attempt: a.attempt,
      workerId: a.worker_id,
      startedAt: iso(a.started_at),
      endedAt: isoOrNull(a.ended_at),
      outcome: a.outcome,
      errorMessage: a.error_message,
      errorStack: a.error_stack,
      ...attemptResponse(a),
    }));
  return {
    list(query: DeliveryQuery): DeliveryPage {
      const limit = pageLimit(query.limit);
      const active = filters.filter((f) => query[f] !== undefined);
      const cursor = query.cursor === undefined ? null : decodeCursor(query.cursor, "dlv");
      const key = `${active.join(",")}|${cursor !== null}`;
      let statement = statements.get(key);
      if (!statement) {
        const where = [
          ...active.map((f) => `${columnOf[f]} = @${f}`),
          ...(cursor !== null ? ["id < @cursor"] : []),
        ];
        statement = db.prepare(
          `SELECT ${deliveryColumns} FROM deliveries ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
           ORDER BY id DESC LIMIT @limit`,
        );
        statements.set(key, statement);
      }
      const params: Record<string, unknown> = { limit: limit + 1 };
      for (const f of active) params[f] = query[f];
      if (cursor !== null) params.cursor = cursor;
      const rows = statement.all(params);
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        items: page.map((row) => toDeliveryView(row)),
        nextCursor: rows.length > limit && last ? encodeCursor(last.id) : null,
      };
    },
    ofEvent(eventId: string): DeliveryView[] {
      return ofEvent.all(eventId).map((row) => toDeliveryView(row, attemptLog(row.id)));
    },
    byId(id: string): DeliveryView | null {
      const row = byId.get(id);
      return row ? toDeliveryView(row, attemptLog(id)) : null;
    },
  };
}
