import type Database from "better-sqlite3";
import { foldTarget } from "../alert-fold.ts";
import type { AlertOccurrence } from "../alert-types.ts";

/**
 * Prepares the alert outbox's `record` on SQLite: a write inside the caller's transaction, with
 * the dead-letter marks that decide which process records a dead letter. Claiming, settling and
 * pruning alerts are core's (core/alert-writes.ts).
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
  };
}
