import type Database from "better-sqlite3";
import { eventStatusSql, inKeyQueueSql } from "../../core/queue-rules.ts";

// The predicate of the deliveries_key_queue partial index, written out verbatim by core so SQLite
// can use the index.
const inKeyQueue = inKeyQueueSql("sqlite", "");

const headSql = `
  SELECT id, status FROM deliveries
  WHERE target = ? AND ordering_key = ? AND ${inKeyQueue}
  ORDER BY order_version, id LIMIT 1`;

const unblockSql =
  "UPDATE deliveries SET status = 'pending', updated_at = ? WHERE id = ? AND status = 'blocked'";

// A dead delivery stops counting once a later delivery of the same target (a replay or a retry
// of it) is done: the event is then done. The row (body included) is rewritten only when its
// status changes: an event with several deliveries stays pending through most of their ends.
const refreshEventSql = `
  UPDATE events SET status = next.status
  FROM (SELECT ${eventStatusSql("sqlite", { deliveries: "deliveries", event: "@eventId" })} AS status) AS next
  WHERE events.id = @eventId AND events.status <> next.status`;

/**
 * Prepares the two follow-ups of every state change: waking the next head of an ordering key
 * (a blocked delivery becomes pending when nothing is ahead of it any more) and recomputing the
 * event's status from its deliveries. Both run inside the caller's transaction.
 *
 * Why wake only the head: a key's deliveries are blocked once each when a claim finds something
 * ahead of them, and only the head is woken when that something ends, so a key with n queued
 * deliveries costs O(n) checks in all rather than O(n²).
 *
 * @example
 * ```ts
 * const follow = prepareFollowUps(db);
 * follow.wakeNextHead("stripe:*", "sub_1", now);
 * follow.refreshEventStatus(eventId);
 * ```
 */
export function prepareFollowUps(db: Database.Database) {
  const head = db.prepare<[string, string], { id: string; status: string }>(headSql);
  const unblock = db.prepare<[number, string]>(unblockSql);
  const refresh = db.prepare<[{ eventId: string }]>(refreshEventSql);
  return {
    wakeNextHead(target: string, orderingKey: string | null, now: number): void {
      if (orderingKey === null) return;
      const next = head.get(target, orderingKey);
      if (next?.status === "blocked") unblock.run(now, next.id);
    },
    refreshEventStatus(eventId: string): void {
      refresh.run({ eventId });
    },
  };
}
