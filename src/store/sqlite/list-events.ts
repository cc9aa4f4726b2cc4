import type Database from "better-sqlite3";
import { type EventSummaryRow, toEventSummary } from "../core/event-views.ts";
import { decodeCursor, encodeCursor, pageLimit } from "../core/paging.ts";
import type { EventPage, EventQuery } from "../types.ts";

type Filter = "source" | "type" | "status";
const filters: readonly Filter[] = ["source", "type", "status"];

/**
 * The WHERE clause for one combination of filters, built only from fixed fragments (values are
 * always bound). With equality on the leading columns of one of the `events_*_id` indexes and
 * `id < @before`, SQLite walks that index backwards and stops after `limit` rows.
 */
function whereClause(active: readonly Filter[], withCursor: boolean, before: string): string {
  const terms = active.map((filter) => `e.${filter} = @${filter}`);
  if (withCursor) terms.push(`e.id < @${before}`);
  return terms.length > 0 ? `WHERE ${terms.join(" AND ")}` : "";
}

/**
 * The SQL of one page: newest first by id, with `receiptCount` as a correlated count over the
 * receipts (event_id, …) index, evaluated only for the rows of the page.
 *
 * @example
 * ```ts
 * listEventsSql(["source"], true); // "SELECT … WHERE e.source = @source AND e.id < @before …"
 * ```
 */
export function listEventsSql(active: readonly Filter[], withCursor: boolean): string {
  return `
    SELECT e.id, e.source, e.dedup_key, e.type, e.status, e.received_at,
           (SELECT count(*) FROM receipts r WHERE r.event_id = e.id) AS receipt_count
    FROM events e
    ${whereClause(active, withCursor, "before")}
    ORDER BY e.id DESC
    LIMIT @limit`;
}

/** Is there at least one row after `@last`? Same index, stops at the first row. */
function moreSql(active: readonly Filter[]): string {
  return `SELECT 1 FROM events e ${whereClause(active, true, "last")} ORDER BY e.id DESC LIMIT 1`;
}

/**
 * Prepares `listEvents`: statements are created once per combination of filters (at most 16) and
 * reused. A page loads at most `limit` rows; `nextCursor` is null exactly when no row follows
 * (checked with a one-row probe on the same index, so the last page is never an empty one).
 *
 * @example
 * ```ts
 * const listEvents = prepareListEvents(db);
 * const page = listEvents({ source: "stripe", limit: 50 });
 * const next = page.nextCursor ? listEvents({ source: "stripe", cursor: page.nextCursor }) : null;
 * ```
 */
export function prepareListEvents(db: Database.Database): (query: EventQuery) => EventPage {
  const pages = new Map<string, Database.Statement<[Record<string, unknown>], EventSummaryRow>>();
  const probes = new Map<string, Database.Statement<[Record<string, unknown>], unknown>>();

  return (query) => {
    const limit = pageLimit(query.limit);
    const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const active = filters.filter((filter) => query[filter] !== undefined);
    const params: Record<string, unknown> = { limit };
    for (const filter of active) params[filter] = query[filter];

    const key = `${active.join(",")}|${before === undefined ? "" : "cursor"}`;
    let page = pages.get(key);
    if (!page) {
      page = db.prepare(listEventsSql(active, before !== undefined));
      pages.set(key, page);
    }
    if (before !== undefined) params.before = before;
    const rows = page.all(params);

    let nextCursor: string | null = null;
    const last = rows.at(-1);
    if (rows.length === limit && last) {
      const probeKey = active.join(",");
      let probe = probes.get(probeKey);
      if (!probe) {
        probe = db.prepare(moreSql(active));
        probes.set(probeKey, probe);
      }
      const probeParams: Record<string, unknown> = { last: last.id };
      for (const filter of active) probeParams[filter] = query[filter];
      if (probe.get(probeParams) !== undefined) nextCursor = encodeCursor(last.id);
    }
    return { items: rows.map(toEventSummary), nextCursor };
  };
}
