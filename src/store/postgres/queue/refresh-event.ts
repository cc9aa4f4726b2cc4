import type pg from "pg";
import { eventStatusSql, openStatusesSql } from "../../core/queue-rules.ts";
import { withClient, withRetry } from "../connection.ts";
import type { SchemaNames } from "../schema-names.ts";
import { inlineSql, queryStatements } from "../simple-query.ts";
import { eventLockId } from "./key-locks.ts";

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
  // The rule itself is core's (core/queue-rules.ts). Its OFFSET 0 keeps each EXISTS a probe of
  // the event's own deliveries (deliveries_event). Without it PostgreSQL may plan a hashed subplan
  // instead, which reads every unfinished delivery of the table once per statement; it does when
  // its statistics say the table is small (never analyzed, as where autovacuum is off): a soak's
  // completions then scanned a 100,000-row backlog each.
  const next = eventStatusSql("postgres", { deliveries: t.deliveries, event: "ev.id", status });
  // Only a status that changes is written: an unchanged event row is not rewritten (status is
  // indexed, so each rewrite is a new row version and new index entries, never a HOT update).
  return `UPDATE ${t.events} ev SET status = ${next}
    WHERE ${pruneTo ? `ev.id = ANY(${pruneTo}) AND ` : ""}ev.id = ANY(${events})
      AND ev.status IS DISTINCT FROM ${next}`;
}

/**
 * Whether the event of `e` (a row of the CTE `ending`, with `id` and `event_id`) has another
 * delivery still open in this statement's snapshot: an SQL boolean for an end statement's
 * result. Such an event's status was derived from a snapshot in which a sibling may be ending in
 * another transaction at this very moment (each sees the other running, and both leave the
 * event `pending`), so the caller rechecks it after its commit (`recheckEventsPostgres`). Only
 * the unkeyed statement needs it: the others end under the event's lock (key-locks.ts, rule 6).
 *
 * @example
 * ```ts
 * const sql = `WITH ending AS (…) SELECT e.id, e.event_id, ${openSiblingsSql(t, "e")} AS recheck FROM ending e`;
 * ```
 */
export function openSiblingsSql(t: SchemaNames, alias: string): string {
  return `EXISTS (SELECT 1 FROM ${t.deliveries} o WHERE o.event_id = ${alias}.event_id
            AND o.status IN ${openStatusesSql}
            AND NOT EXISTS (SELECT 1 FROM ending x WHERE x.id = o.id) OFFSET 0)`;
}

/**
 * Derives the status of `eventIds` again, each under its event's advisory lock (key-locks.ts,
 * rule 6) and with a snapshot taken after it: called after the unkeyed end statement committed
 * and found a sibling open (openSiblingsSql). Of two deliveries of one event ending at once, each
 * rechecks after its own commit, or ends under the event's lock; the lock puts them one after
 * the other, so the last one's snapshot holds both commits and writes the final status. One round trip (BEGIN, locks in key order, refresh,
 * COMMIT in one simple-query message).
 *
 * @example
 * ```ts
 * await recheckEventsPostgres(pool, schemaNames("hookinbox"), ["evt_…"]);
 * ```
 */
export async function recheckEventsPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  eventIds: readonly string[],
): Promise<void> {
  const ids = [...new Set(eventIds)];
  if (ids.length === 0) return;
  const lock = `SELECT pg_advisory_xact_lock(k.lock_id) FROM (
    SELECT DISTINCT ${eventLockId("id")} AS lock_id FROM unnest($1::text[]) AS id
    ORDER BY lock_id OFFSET 0) k`;
  await withRetry(() =>
    withClient(pool, (client) =>
      queryStatements(client, [
        "BEGIN",
        inlineSql(lock, [ids]),
        inlineSql(refreshEventsSql(t, "$1::text[]", undefined, "$1::text[]"), [ids]),
        "COMMIT",
      ]),
    ),
  );
}
