import type Database from "better-sqlite3";
import { ulid } from "../../../ids.ts";
import { aheadOnKeySql } from "../../core/queue-rules.ts";
import type { ClaimedDelivery, ClaimInput } from "../../queue-types.ts";

// Due pending deliveries in due order, a page at a time. INDEXED BY pins the partial due index:
// without statistics the planner preferred (status, id) plus a sort of every pending row.
const candidatesSql = `
  SELECT id, target, ordering_key, order_version, run_at FROM deliveries INDEXED BY deliveries_due
  WHERE status = 'pending' AND run_at <= @now AND (run_at, id) > (@afterRunAt, @afterId)
  ORDER BY run_at, id LIMIT @page`;

// The same, for deliveries of some events only (`eventIds`, a JSON array): read through the
// event index, so due deliveries of other events ahead of them are never scanned.
const candidatesOfSql = `
  SELECT id, target, ordering_key, order_version, run_at FROM deliveries INDEXED BY deliveries_event
  WHERE event_id IN (SELECT value FROM json_each(@eventIds)) AND status = 'pending'
    AND run_at <= @now AND (run_at, id) > (@afterRunAt, @afterId)
  ORDER BY run_at, id LIMIT @page`;

// Anything in flight for the key, dead and blocking it, or queued ahead of this delivery?
// (served by deliveries_key_queue)
const aheadSql = `
  SELECT 1 FROM deliveries
  WHERE ${aheadOnKeySql("sqlite", "", { target: "@target", orderingKey: "@orderingKey", id: "@id", orderVersion: "@orderVersion" })}
  LIMIT 1`;

const blockSql = "UPDATE deliveries SET status = 'blocked', updated_at = @now WHERE id = @id";

const leaseSql = `
  UPDATE deliveries
  SET status = 'running', attempts = attempts + 1, lease_owner = @workerId,
      lease_expires_at = @leaseExpiresAt, updated_at = @now
  WHERE id = @id AND status = 'pending'
  RETURNING attempts, budget_base, is_replay, replay_of, event_id, version`;

const attemptSql = `
  INSERT INTO attempts (id, delivery_id, attempt, worker_id, started_at, outcome)
  VALUES (@id, @deliveryId, @attempt, @workerId, @now, 'running')`;

const eventSql = `
  SELECT source, dedup_key, type, ordering_key, occurred_at, body, headers, traceparent FROM events
  WHERE id = ?`;

const appliedSql = "SELECT version FROM applied_versions WHERE target = ? AND ordering_key = ?";

interface Candidate {
  id: string;
  target: string;
  ordering_key: string | null;
  order_version: number;
  run_at: number;
}

interface LeasedRow {
  attempts: number;
  budget_base: number;
  is_replay: 0 | 1;
  replay_of: string | null;
  event_id: string;
  version: number | null;
}

interface EventRow {
  source: string;
  dedup_key: string;
  type: string | null;
  ordering_key: string | null;
  occurred_at: number | null;
  body: Buffer;
  headers: string;
  traceparent: string | null;
}

/** Candidates examined per claim at most; blocked ones are parked so they are not seen again. */
const maxScan = 1000;

/**
 * Prepares `claimDeliveries`, run inside one write transaction. It walks due pending deliveries
 * in due order and leases each one that is the head of its ordering key with nothing in flight;
 * a delivery with something ahead of it is parked as `blocked` (and woken when that ends), so a
 * long queue on one key costs one look per delivery, not one per claim. The unique index
 * deliveries_one_running_per_key backs the invariant up.
 *
 * @example
 * ```ts
 * const claim = prepareClaimDeliveries(db);
 * const claimed = group.submit(() => claim({ workerId, limit: 10, leaseMs: 30_000, now }));
 * ```
 */
export function prepareClaimDeliveries(
  db: Database.Database,
): (input: ClaimInput) => ClaimedDelivery[] {
  const candidatesAll = db.prepare<[Record<string, unknown>], Candidate>(candidatesSql);
  const candidatesOf = db.prepare<[Record<string, unknown>], Candidate>(candidatesOfSql);
  const ahead = db.prepare<[Record<string, unknown>], 1>(aheadSql);
  const block = db.prepare(blockSql);
  const lease = db.prepare<[Record<string, unknown>], LeasedRow>(leaseSql);
  const insertAttempt = db.prepare(attemptSql);
  const event = db.prepare<[string], EventRow>(eventSql);
  const applied = db.prepare<[string, string], { version: number }>(appliedSql);

  return ({ workerId, limit, leaseMs, targetLeaseMs, now, eventIds }) => {
    const claimed: ClaimedDelivery[] = [];
    const of = eventIds === undefined ? {} : { eventIds: JSON.stringify(eventIds) };
    const candidates = eventIds === undefined ? candidatesAll : candidatesOf;
    const at = Math.floor(now);
    let afterRunAt = Number.MIN_SAFE_INTEGER;
    let afterId = "";
    let scanned = 0;
    while (claimed.length < limit && scanned < maxScan) {
      const page = candidates.all({
        ...of,
        now: at,
        afterRunAt,
        afterId,
        page: Math.min(Math.max(2 * (limit - claimed.length), 8), 100, maxScan - scanned),
      });
      if (page.length === 0) break;
      for (const candidate of page) {
        scanned++;
        afterRunAt = candidate.run_at;
        afterId = candidate.id;
        if (claimed.length >= limit) break;
        if (
          candidate.ordering_key !== null &&
          ahead.get({
            target: candidate.target,
            orderingKey: candidate.ordering_key,
            orderVersion: candidate.order_version,
            id: candidate.id,
          }) !== undefined
        ) {
          block.run({ id: candidate.id, now: at });
          continue;
        }
        const leaseExpiresAt = at + (targetLeaseMs?.[candidate.target] ?? leaseMs);
        const row = lease.get({ id: candidate.id, workerId, leaseExpiresAt, now: at });
        if (!row) continue;
        const attemptId = `att_${ulid(at)}`;
        insertAttempt.run({
          id: attemptId,
          deliveryId: candidate.id,
          attempt: row.attempts,
          workerId,
          now: at,
        });
        const e = event.get(row.event_id);
        if (!e)
          throw new Error(`claim: event ${row.event_id} of delivery ${candidate.id} is missing`);
        claimed.push({
          id: candidate.id,
          eventId: row.event_id,
          target: candidate.target,
          attempt: row.attempts,
          budgetAttempt: row.attempts - row.budget_base,
          attemptId,
          leaseExpiresAt,
          isReplay: row.is_replay === 1,
          replayOf: row.replay_of,
          source: e.source,
          dedupKey: e.dedup_key,
          type: e.type,
          orderingKey: candidate.ordering_key,
          version: row.version,
          occurredAt: e.occurred_at,
          body: new Uint8Array(e.body.buffer, e.body.byteOffset, e.body.byteLength),
          headers: JSON.parse(e.headers) as Array<[string, string]>,
          runAt: candidate.run_at,
          traceparent: e.traceparent,
          appliedVersion:
            candidate.ordering_key === null
              ? null
              : (applied.get(candidate.target, candidate.ordering_key)?.version ?? null),
        });
      }
    }
    return claimed;
  };
}
