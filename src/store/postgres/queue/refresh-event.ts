import type { SchemaNames } from "../schema-names.ts";

/**
 * The one statement that derives events' status from their deliveries: `pending` while any
 * delivery is open, else `dead` while some target's last dead delivery has no later success,
 * else `done`. Writes only the events whose status changes. Usable alone or as a data-modifying
 * CTE.
 *
 * `events` is an SQL expression of a text[] of event ids. `changed`, when given, names the
 * deliveries (`ids`, a text[] expression) that the same statement moves to one new status (their
 * change is not visible to the statement's other parts): that status (an SQL expression) is used
 * instead of the stored one. `pruneTo`, when given, is a text[] of parameters or literals that
 * holds every event of `events`: PostgreSQL then touches only their day partitions (it prunes
 * for known values only, not for a subquery's).
 *
 * @example
 * ```ts
 * await pool.query(refreshEventsSql(t, "$1::text[]"), [["evt_…"]]);
 * const sql = `WITH refreshed AS (${refreshEventsSql(t, "ARRAY[$1::text]", { ids: "ARRAY[$2::text]", status: "$3::text" })}) SELECT 1`;
 * ```
 */
export function refreshEventsSql(
  t: SchemaNames,
  events: string,
  changed?: { readonly ids: string; readonly status: string },
  pruneTo?: string,
): string {
  const status = (alias: string) =>
    changed
      ? `(CASE WHEN ${alias}.id = ANY(${changed.ids}) THEN ${changed.status} ELSE ${alias}.status END)`
      : `${alias}.status`;
  // OFFSET 0 keeps each EXISTS a probe of the event's own deliveries (deliveries_event). Without
  // it PostgreSQL may plan a hashed subplan instead, which reads every unfinished delivery of the
  // table once per statement; it does when its statistics say the table is small (never analyzed,
  // as where autovacuum is off): a soak's completions then scanned a 100,000-row backlog each.
  const next = `CASE
      WHEN EXISTS (SELECT 1 FROM ${t.deliveries} o WHERE o.event_id = ev.id
                   AND ${status("o")} IN ('pending', 'blocked', 'running') OFFSET 0) THEN 'pending'
      WHEN EXISTS (SELECT 1 FROM ${t.deliveries} d WHERE d.event_id = ev.id AND ${status("d")} = 'dead'
                   AND NOT EXISTS (SELECT 1 FROM ${t.deliveries} r WHERE r.event_id = d.event_id
                                   AND r.target = d.target AND r.id > d.id
                                   AND ${status("r")} IN ('done', 'stale') OFFSET 0)
                   OFFSET 0) THEN 'dead'
      ELSE 'done' END`;
  // Only a status that changes is written: an unchanged event row is not rewritten (status is
  // indexed, so each rewrite is a new row version and new index entries, never a HOT update).
  return `UPDATE ${t.events} ev SET status = ${next}
    WHERE ${pruneTo ? `ev.id = ANY(${pruneTo}) AND ` : ""}ev.id = ANY(${events})
      AND ev.status IS DISTINCT FROM ${next}`;
}
