import type { SqlDialect } from "./sql-template.ts";

/**
 * The queue's rules that must run inside one statement (they decide under the statement's own
 * snapshot and locks), each defined once here and written out for either store. Only the
 * spelling differs by dialect: a boolean column is `col = 1` on SQLite and `col` on PostgreSQL,
 * and PostgreSQL's probes end in `OFFSET 0` (see refresh-event.ts there for why). The generated
 * text is pinned by queue-rules.test.ts; the queue conformance suite runs it on both stores.
 */

/** The statuses of a delivery still to run or running. */
export const openStatusesSql = "('pending', 'blocked', 'running')";

const column = (alias: string, name: string) => (alias === "" ? name : `${alias}.${name}`);

/**
 * A boolean column (or expression) is true, as `dialect` spells it so that partial indexes
 * match: `col = 1` on SQLite, `col` on PostgreSQL.
 *
 * @example
 * ```ts
 * isTrueSql("sqlite", "d.blocks_key"); // "d.blocks_key = 1"
 * ```
 */
export function isTrueSql(dialect: SqlDialect, expression: string): string {
  return dialect === "sqlite" ? `${expression} = 1` : expression;
}

/**
 * PostgreSQL keeps a subquery (each EXISTS here) a probe of its own index behind `OFFSET 0`;
 * SQLite needs no fence.
 *
 * @example
 * ```ts
 * `EXISTS (SELECT 1 FROM deliveries o WHERE o.event_id = e.id${fenceSql("postgres")})`; // "… OFFSET 0)"
 * ```
 */
export function fenceSql(dialect: SqlDialect): string {
  return dialect === "postgres" ? " OFFSET 0" : "";
}

/**
 * Whether the delivery `alias` (unqualified columns when "") is in its key's queue: open, or dead
 * and still blocking its key. On SQLite it is the predicate of the deliveries_key_queue partial
 * index, word for word, so that the planner can use the index.
 *
 * @example
 * ```ts
 * inKeyQueueSql("sqlite", ""); // "(status IN ('pending', 'blocked', 'running') OR blocks_key = 1)"
 * inKeyQueueSql("postgres", "h"); // "(h.status IN ('pending', 'blocked', 'running') OR h.blocks_key)"
 * ```
 */
export function inKeyQueueSql(dialect: SqlDialect, alias: string): string {
  const blocks = isTrueSql(dialect, column(alias, "blocks_key"));
  return `(${column(alias, "status")} IN ${openStatusesSql} OR ${blocks})`;
}

/**
 * "Something ahead on this key": whether the delivery `other` (an alias, or "" for unqualified
 * columns) keeps the delivery described by `of` (SQL expressions of its target, ordering key, id
 * and order version) from running now: it is another delivery of the same target and key, in the
 * key's queue, and it is running, dead and blocking the key, or before it in (version, id) order.
 *
 * @example
 * ```ts
 * const sql = `SELECT 1 FROM deliveries WHERE ${aheadOnKeySql("sqlite", "", { target: "@target", orderingKey: "@key", id: "@id", orderVersion: "@version" })} LIMIT 1`;
 * ```
 */
export function aheadOnKeySql(
  dialect: SqlDialect,
  other: string,
  of: {
    readonly target: string;
    readonly orderingKey: string;
    readonly id: string;
    readonly orderVersion: string;
  },
): string {
  const o = (name: string) => column(other, name);
  return `${o("target")} = ${of.target} AND ${o("ordering_key")} = ${of.orderingKey} AND ${o("id")} <> ${of.id}
    AND ${inKeyQueueSql(dialect, other)}
    AND (${o("status")} = 'running' OR ${isTrueSql(dialect, o("blocks_key"))} OR ${o("order_version")} < ${of.orderVersion}
         OR (${o("order_version")} = ${of.orderVersion} AND ${o("id")} < ${of.id}))`;
}

/**
 * The event-status rule, as an SQL expression of the event whose id is `event`: `pending` while
 * any of its deliveries is open, else `dead` while some target's last dead delivery has no later
 * `done` or `stale` delivery of the same target (a replay or retry of it), else `done`.
 * `deliveries` is the deliveries table; `status(alias)` is the status of a delivery row (its
 * stored `alias.status` by default; PostgreSQL's end statements pass the status they are writing,
 * which their own snapshot does not show yet).
 *
 * @example
 * ```ts
 * const sql = `UPDATE events SET status = ${eventStatusSql("sqlite", { deliveries: "deliveries", event: "@eventId" })} WHERE id = @eventId`;
 * ```
 */
export function eventStatusSql(
  dialect: SqlDialect,
  at: {
    readonly deliveries: string;
    readonly event: string;
    readonly status?: (alias: string) => string;
  },
): string {
  const status = at.status ?? ((alias: string) => `${alias}.status`);
  const end = fenceSql(dialect);
  return `CASE
      WHEN EXISTS (SELECT 1 FROM ${at.deliveries} o WHERE o.event_id = ${at.event}
                   AND ${status("o")} IN ${openStatusesSql}${end}) THEN 'pending'
      WHEN EXISTS (SELECT 1 FROM ${at.deliveries} d WHERE d.event_id = ${at.event} AND ${status("d")} = 'dead'
                   AND NOT EXISTS (SELECT 1 FROM ${at.deliveries} r WHERE r.event_id = d.event_id
                                   AND r.target = d.target AND r.id > d.id
                                   AND ${status("r")} IN ('done', 'stale')${end})${end}) THEN 'dead'
      ELSE 'done' END`;
}
