import type { DeliveryQuery, ReplayFilter } from "../queue-types.ts";
import type { EventQuery, ReceiptQuery } from "../types.ts";
import { decodeCursor } from "./paging.ts";

/**
 * One condition of a WHERE clause: SQL with a `?` for each bound value (columns and operators
 * are fixed fragments; values are always bound). Drivers render the `?`s their own way.
 */
export interface WhereTerm {
  readonly sql: string;
  readonly values: readonly unknown[];
}

const equal = (column: string, value: unknown): WhereTerm[] =>
  value === undefined ? [] : [{ sql: `${column} = ?`, values: [value] }];

/**
 * `id < ?` for a page after `cursor` (newest-first listings), none without one; a cursor that is
 * not one of ours throws HOOKINBOX_CURSOR_INVALID.
 *
 * @example
 * ```ts
 * beforeCursor(page.nextCursor ?? undefined, "dlv"); // [{ sql: "id < ?", values: ["dlv_…"] }]
 * ```
 */
export function beforeCursor(
  cursor: string | undefined,
  prefix: "evt" | "dlv" | "rcp" = "evt",
): WhereTerm[] {
  return cursor === undefined ? [] : [{ sql: "id < ?", values: [decodeCursor(cursor, prefix)] }];
}

/**
 * The filters of `listEvents` (source, type, status), without the cursor.
 *
 * @example
 * ```ts
 * eventFilterTerms({ source: "stripe" }); // [{ sql: "source = ?", values: ["stripe"] }]
 * ```
 */
export function eventFilterTerms(query: EventQuery): WhereTerm[] {
  return [
    ...equal("source", query.source),
    ...equal("type", query.type),
    ...equal("status", query.status),
  ];
}

/**
 * The conditions of `listReceipts`: rejected or accepted only, by source, after the cursor.
 *
 * @example
 * ```ts
 * receiptTerms({ rejected: true }); // [{ sql: "event_id IS NULL", values: [] }]
 * ```
 */
export function receiptTerms(query: ReceiptQuery): WhereTerm[] {
  const rejected: WhereTerm[] =
    query.rejected === undefined
      ? []
      : [{ sql: query.rejected ? "event_id IS NULL" : "event_id IS NOT NULL", values: [] }];
  return [...rejected, ...equal("source", query.source), ...beforeCursor(query.cursor, "rcp")];
}

/**
 * The conditions of `listDeliveries`: status, target, event, after the cursor.
 *
 * @example
 * ```ts
 * deliveryTerms({ status: "dead" }); // [{ sql: "status = ?", values: ["dead"] }]
 * ```
 */
export function deliveryTerms(query: DeliveryQuery): WhereTerm[] {
  return [
    ...equal("status", query.status),
    ...equal("target", query.target),
    ...equal("event_id", query.eventId),
    ...beforeCursor(query.cursor, "dlv"),
  ];
}

/**
 * The conditions of a bulk replay filter (received times are whole ms, from inclusive, to
 * exclusive).
 *
 * @example
 * ```ts
 * replayTerms({ source: "stripe", receivedTo: 1.5 }); // source = ?, received_at < ? (values "stripe", 1)
 * ```
 */
export function replayTerms(filter: ReplayFilter): WhereTerm[] {
  const time = (sql: string, ms: number | undefined): WhereTerm[] =>
    ms === undefined ? [] : [{ sql, values: [Math.floor(ms)] }];
  return [
    ...equal("source", filter.source),
    ...equal("type", filter.type),
    ...equal("status", filter.status),
    ...time("received_at >= ?", filter.receivedFrom),
    ...time("received_at < ?", filter.receivedTo),
  ];
}

/**
 * Renders terms as `WHERE … AND …` (empty without terms) and the values in order.
 * `placeholder(n)` writes the n-th bound value (1-based, counting `offset` values bound before).
 *
 * @example
 * ```ts
 * renderWhere(deliveryTerms({ status: "dead" }), (n) => `$${n}`); // { where: "WHERE status = $1", values: ["dead"] }
 * renderWhere(deliveryTerms({ status: "dead" }), () => "?"); // { where: "WHERE status = ?", values: ["dead"] }
 * ```
 */
export function renderWhere(
  terms: readonly WhereTerm[],
  placeholder: (n: number) => string,
  offset = 0,
): { where: string; values: unknown[] } {
  const values: unknown[] = [];
  const parts = terms.map((term) => {
    let n = 0;
    const sql = term.sql.replace(/\?/g, () => {
      values.push(term.values[n++]);
      return placeholder(offset + values.length);
    });
    return sql;
  });
  return { where: parts.length > 0 ? `WHERE ${parts.join(" AND ")}` : "", values };
}
