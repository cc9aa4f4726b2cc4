import type Database from "better-sqlite3";
import { type CountDialect, deliveryCountQueries, toDeliveryCounts } from "../core/bulk-counts.ts";
import { deliveryTerms, renderWhere } from "../core/filters.ts";
import { pageLimit, pageOf } from "../core/paging.ts";
import {
  type AttemptRow,
  attemptColumns,
  type DeliveryRow,
  toAttemptView,
  toDeliveryView,
} from "../core/views.ts";
import type {
  AttemptView,
  DeliveryCountQuery,
  DeliveryCounts,
  DeliveryPage,
  DeliveryQuery,
  DeliveryView,
} from "../queue-types.ts";

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

/**
 * Bulk counts in SQLite: a list is one JSON parameter read with json_each.
 *
 * @example
 * ```ts
 * deliveryCountQueries({ statuses: ["dead"] }, sqliteCounts);
 * ```
 */
export const sqliteCounts: CountDialect = {
  dialect: "sqlite",
  events: "events",
  deliveries: "deliveries",
};

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
  const statements = new Map<string, Database.Statement<unknown[], DeliveryRow>>();
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
      const { where, values } = renderWhere(deliveryTerms(query), () => "?");
      const sql = `SELECT ${deliveryColumns} FROM deliveries ${where} ORDER BY id DESC LIMIT ?`;
      let statement = statements.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        statements.set(sql, statement);
      }
      return pageOf(statement.all(...values, limit + 1), limit, toDeliveryView);
    },
    ofEvent(eventId: string): DeliveryView[] {
      return ofEvent.all(eventId).map((row) => toDeliveryView(row, attemptLog(row.id)));
    },
    /** Deliveries per target and event kind, and their distinct events (bulk dry runs). */
    counts(query: DeliveryCountQuery): DeliveryCounts {
      const { kinds, events } = deliveryCountQueries(query, sqliteCounts);
      const rows = db.prepare(kinds.sql).all(...kinds.values) as Parameters<
        typeof toDeliveryCounts
      >[0];
      const total = db.prepare(events.sql).get(...events.values) as { n: number } | undefined;
      return toDeliveryCounts(rows, total?.n);
    },
    byId(id: string): DeliveryView | null {
      const row = byId.get(id);
      return row ? toDeliveryView(row, attemptLog(id)) : null;
    },
  };
}
