import type Database from "better-sqlite3";
import { decodeCursor, encodeCursor, pageLimit } from "../../core/paging.ts";
import {
  type AttemptRow,
  attemptColumns,
  type DeliveryRow,
  toAttemptView,
  toDeliveryView,
} from "../../core/views.ts";
import type { AttemptView, DeliveryPage, DeliveryQuery, DeliveryView } from "../../queue-types.ts";

export type { DeliveryRow };
export { toDeliveryView };

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
    `SELECT ${attemptColumns} FROM attempts WHERE delivery_id = ? ORDER BY attempt`,
  );
  const byId = db.prepare<[string], DeliveryRow>(
    `SELECT ${deliveryColumns} FROM deliveries WHERE id = ?`,
  );
  const attemptLog = (id: string): AttemptView[] => attemptsOf.all(id).map(toAttemptView);
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
