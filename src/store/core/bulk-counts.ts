import type { DeliveryCountQuery, DeliveryCounts, EventKindCount } from "../queue-types.ts";
import { renderWhere, replayTerms, type WhereTerm } from "./filters.ts";
import { inList, listValue, placeholder, type SqlDialect } from "./sql-template.ts";

/** Where a driver's counts run: its dialect and its table names. */
export interface CountDialect {
  readonly dialect: SqlDialect;
  readonly events: string;
  readonly deliveries: string;
}

/** One SQL statement and its bound values. */
export interface CountQuery {
  readonly sql: string;
  readonly values: unknown[];
}

/**
 * Events matching a replay filter grouped by source and type: what bulk replay's routing reads,
 * so a dry run routes each group once instead of each event (the table is never loaded).
 *
 * @example
 * ```ts
 * const { sql, values } = eventKindsQuery({ source: "stripe" }, sqliteCounts);
 * ```
 */
export function eventKindsQuery(
  filter: Parameters<typeof replayTerms>[0],
  dialect: CountDialect,
): CountQuery {
  const { where, values } = renderWhere(replayTerms(filter), (n) =>
    placeholder(dialect.dialect, n),
  );
  return {
    sql: `SELECT source, type, count(*) AS n FROM ${dialect.events} ${where} GROUP BY source, type ORDER BY source, type`,
    values,
  };
}

function deliveryCountTerms(query: DeliveryCountQuery, dialect: CountDialect): WhereTerm[] {
  return [
    {
      sql: inList(dialect.dialect, "status"),
      values: [listValue(dialect.dialect, query.statuses)],
    },
    ...(query.target === undefined ? [] : [{ sql: "target = ?", values: [query.target] }]),
    ...(query.ids === undefined
      ? []
      : [{ sql: inList(dialect.dialect, "id"), values: [listValue(dialect.dialect, query.ids)] }]),
  ];
}

/**
 * Two aggregates over the deliveries a bulk retry would touch: per target and event kind
 * (`kinds`, for per-target counts and the runbook check), and their distinct events (`events`).
 *
 * @example
 * ```ts
 * const { kinds, events } = deliveryCountQueries({ statuses: ["dead"] }, postgresCounts(t));
 * ```
 */
export function deliveryCountQueries(
  query: DeliveryCountQuery,
  dialect: CountDialect,
): { kinds: CountQuery; events: CountQuery } {
  const { where, values } = renderWhere(deliveryCountTerms(query, dialect), (n) =>
    placeholder(dialect.dialect, n),
  );
  return {
    kinds: {
      sql: `SELECT d.target, e.source, e.type, count(*) AS n
        FROM (SELECT target, event_id FROM ${dialect.deliveries} ${where}) d
        JOIN ${dialect.events} e ON e.id = d.event_id
        GROUP BY d.target, e.source, e.type ORDER BY d.target, e.source, e.type`,
      values,
    },
    events: {
      sql: `SELECT count(DISTINCT event_id) AS n FROM ${dialect.deliveries} ${where}`,
      values,
    },
  };
}

/** A count row as a driver returns it (PostgreSQL's bigint count arrives as text). */
interface KindRow {
  source: string;
  type: string | null;
  n: number | string;
}

/**
 * The rows of `eventKindsQuery` as counts.
 *
 * @example
 * ```ts
 * toEventKinds([{ source: "stripe", type: "invoice.paid", n: "3" }]); // [{ …, events: 3 }]
 * ```
 */
export function toEventKinds(rows: readonly KindRow[]): EventKindCount[] {
  return rows.map((r) => ({ source: r.source, type: r.type, events: Number(r.n) }));
}

/**
 * The rows of `deliveryCountQueries` as counts.
 *
 * @example
 * ```ts
 * toDeliveryCounts([{ target: "app", source: "s", type: null, n: 2 }], 1);
 * ```
 */
export function toDeliveryCounts(
  rows: ReadonlyArray<KindRow & { target: string }>,
  events: number | string | undefined,
): DeliveryCounts {
  return {
    events: Number(events ?? 0),
    kinds: rows.map((r) => ({
      target: r.target,
      source: r.source,
      type: r.type,
      deliveries: Number(r.n),
    })),
  };
}
