// The ordering-key lock protocol of the PostgreSQL queue: the one place it is written down.
//
// Any number of worker processes on any number of machines claim and end deliveries at once.
// "One delivery per (target, ordering key) in flight, in version order" holds because:
//
// 1. Candidate rows are locked with FOR UPDATE SKIP LOCKED, so two claimers never take one row.
// 2. Every transaction that can change "who may run next" for a (target, ordering key) holds a
//    transaction-scoped advisory lock on that key (`keyLockSql`) BEFORE the statement that reads
//    the key's deliveries: claimers TRY it and skip the key when another transaction holds it
//    (core/claim-plan.ts), completions and failures WAIT for it (end-attempt.ts). A completion
//    or failure waits for several keys (a batch) in lock-id order, so two of them never wait for
//    each other in a cycle; claimers only try, so they never wait at all.
// 3. The lock is taken in one statement and the key is read in the next, inside the same
//    transaction. Under READ COMMITTED each statement sees the commits made before it started, so
//    the reader sees everything the previous holder of the lock committed. This holds as well
//    when both statements travel in one simple-query message (BEGIN; lock; change; COMMIT, see
//    end-attempt.ts): each statement of the message still takes its own snapshot. The change
//    statement checks the lease again itself (the lock step holds no row lock), so it needs
//    nothing from the lock step's result. (One statement that
//    both took the lock and read the key would read with a snapshot from before it waited: a
//    completion could then miss a delivery a claim had just parked, and leave it blocked.)
// 4. So a claimer that parks a delivery as `blocked` (something is ahead of it) and a completion
//    that wakes the key's next head (`wakeNextHeadSql`) are serialised: whichever runs second
//    sees the first, and no delivery is left blocked with nothing ahead of it.
// 5. The unique partial index deliveries_one_running_per_key backs "one running per key" up.
// 6. An event's status is derived from all its deliveries, which may end at once in different
//    transactions (several targets). The lock step also WAITS for an advisory lock per event
//    (`eventLockId`), after the key locks and in lock-id order, so two end statements of one
//    event run one after the other and the second one's snapshot holds the first one's commit.
//    The one statement that ends unkeyed deliveries outside a transaction takes no lock: it
//    marks an event with a sibling still open, and its caller rechecks that event after its
//    commit, under the event's lock (refresh-event.ts). Whichever order they meet in, the last
//    to take an event's lock sees every delivery of the event that has ended.
//
// The lock id is the same hash migration 002's functions used (hookinbox_key_lock_id), so the
// protocol did not change when the SQL moved from PL/pgSQL into these modules.

import { inKeyQueueSql } from "../../core/queue-rules.ts";
import type { SchemaNames } from "../schema-names.ts";

// The key lock id is core's, which writes the claim's statements (core/claim-plan.ts).
export { keyLockId } from "../../core/claim-plan.ts";

/**
 * The advisory lock id of an event (rule 6), as SQL over a text expression: the key locks' one
 * 64-bit key space, with its own seed (a collision with a key's id only serialises two ends).
 *
 * @example
 * ```ts
 * const sql = `SELECT pg_advisory_xact_lock(${eventLockId("d.event_id")})`;
 * ```
 */
export function eventLockId(eventId: string): string {
  return `hashtextextended(${eventId}, 7032)`;
}

/**
 * Wakes the head of each ending delivery's key if it is parked: among the key's open deliveries
 * (and dead ones that block it), the first in version order, other than `endingId` (the delivery
 * this statement ends, still `running` in the statement's snapshot). `from` names the ending
 * deliveries (one per key: one delivery per key runs at a time); the other placeholders are SQL
 * expressions over it (a null key wakes nothing). Run only while holding the keys' locks, in a
 * statement after the one that took them.
 *
 * @example
 * ```ts
 * const sql = `WITH e AS (SELECT …), woken AS (${wakeNextHeadSql(t, { from: "e", target: "e.target", key: "e.ordering_key", endingId: "e.id", now: "e.now" })}) SELECT 1`;
 * ```
 */
export function wakeNextHeadSql(
  t: SchemaNames,
  at: { from: string; target: string; key: string; endingId: string; now: string },
): string {
  return `UPDATE ${t.deliveries} w SET status = 'pending', updated_at = ${at.now}
     FROM ${at.from}
     WHERE w.status = 'blocked' AND w.id = (
       SELECT h.id FROM ${t.deliveries} h
       WHERE h.target = ${at.target} AND h.ordering_key = ${at.key} AND h.id <> ${at.endingId}
         AND ${inKeyQueueSql("postgres", "h")}
       ORDER BY h.order_version, h.id LIMIT 1)`;
}
