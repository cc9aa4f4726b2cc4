import type Database from "better-sqlite3";
import { foldTarget } from "../alert-fold.ts";
import type { AlertOccurrence, OutboxAlert } from "../alert-types.ts";

/**
 * Prepares the alert outbox on SQLite: `record` (a write, inside the caller's transaction, with
 * the dead-letter marks that decide which process records a dead letter), `claim` (a write: the due alerts, leased), `settle`, `prune` and the reads thresholds need.
 *
 * @example
 * ```ts
 * const outbox = prepareAlertOutbox(db);
 * outbox.record([{ condition: "dead-letter:stripe:app", kind: "dead-letter", payload }], { now, windowMs });
 * ```
 */
export function prepareAlertOutbox(db: Database.Database) {
  const waiting = db.prepare<[string, number], { id: string }>(
    `SELECT id FROM alert_outbox WHERE condition = ? AND attempts = 0 AND delivered_at IS NULL
       AND slot_at > ? ORDER BY slot_at DESC LIMIT 1`,
  );
  const lastSlot = db.prepare<[string], { slot: number | null }>(
    "SELECT max(slot_at) AS slot FROM alert_outbox WHERE condition = ?",
  );
  const fold = db.prepare(
    "UPDATE alert_outbox SET count = count + 1, payload = @payload, last_at = @now WHERE id = @id",
  );
  const insert = db.prepare(
    `INSERT INTO alert_outbox (id, condition, kind, payload, created_at, last_at, slot_at, due_at)
     VALUES (@id, @condition, @kind, @payload, @now, @now, @slot, @slot)`,
  );
  const mark = db.prepare(
    `UPDATE deliveries SET alerted_at = @now
     WHERE id = @id AND status = 'dead' AND alerted_at IS NULL`,
  );
  const claim = db.prepare<[{ now: number; until: number; limit: number }], OutboxAlert>(
    `UPDATE alert_outbox SET due_at = @until
     WHERE id IN (SELECT id FROM alert_outbox WHERE delivered_at IS NULL AND due_at <= @now
                  ORDER BY due_at, id LIMIT @limit)
     RETURNING id, condition, kind, payload, count, created_at AS createdAt, last_at AS lastAt,
               attempts`,
  );
  const prune = db.prepare(
    `DELETE FROM alert_outbox WHERE id IN (SELECT id FROM alert_outbox
       WHERE delivered_at IS NOT NULL AND delivered_at < @before LIMIT @limit)`,
  );
  const delivered = db.prepare(
    "UPDATE alert_outbox SET delivered_at = @now, attempts = attempts + 1, last_error = NULL WHERE id = @id",
  );
  const failed = db.prepare(
    "UPDATE alert_outbox SET due_at = @retryAt, attempts = attempts + 1, last_error = @error WHERE id = @id",
  );
  return {
    record(
      occurrences: readonly AlertOccurrence[],
      input: { now: number; windowMs: number },
    ): void {
      const now = Math.floor(input.now);
      // One dead letter may have an occurrence per sink (webhook, function): marked once for all.
      const marked = new Map<string, boolean>();
      for (const { deadLetterId, ...occurrence } of occurrences) {
        if (deadLetterId !== undefined) {
          if (!marked.has(deadLetterId))
            marked.set(deadLetterId, mark.run({ id: deadLetterId, now }).changes === 1);
          if (!marked.get(deadLetterId)) continue;
        }
        const payload = JSON.stringify(occurrence.payload);
        const target = foldTarget({
          waiting: waiting.get(occurrence.condition, now)?.id ?? null,
          lastSlot: lastSlot.get(occurrence.condition)?.slot ?? null,
          now,
          windowMs: input.windowMs,
        });
        if ("foldInto" in target) fold.run({ id: target.foldInto, payload, now });
        else insert.run({ ...occurrence, id: target.id, payload, now, slot: target.newSlot });
      }
    },
    claim(now: number, limit: number, leaseMs: number): OutboxAlert[] {
      const at = Math.floor(now);
      return claim
        .all({ now: at, until: at + Math.floor(leaseMs), limit })
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
    },
    prune: (before: number, limit: number) =>
      prune.run({ before: Math.floor(before), limit }).changes,
    settle(
      id: string,
      outcome:
        | { delivered: true; now: number }
        | { delivered: false; retryAt: number; error: string },
    ): void {
      if (outcome.delivered) delivered.run({ id, now: Math.floor(outcome.now) });
      else failed.run({ id, retryAt: Math.floor(outcome.retryAt), error: outcome.error });
    },
  };
}
