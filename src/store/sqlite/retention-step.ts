import type Database from "better-sqlite3";
import { ulid, ulidTimePrefix } from "../../ids.ts";
import { nextCursor, type ScanWindow } from "../core/scan-window.ts";
import { UNFINISHED_DELIVERY_STATUSES } from "../purge-types.ts";
import type { RetentionStepInput, RetentionStepResult } from "../retention-types.ts";
import type { AuditAppender } from "./audit.ts";
import { prepareScanWindow } from "./scan-window.ts";

const unfinished = UNFINISHED_DELIVERY_STATUSES.map((s) => `'${s}'`).join(", ");

/**
 * Prepares one retention step on SQLite (a write op: one batch in one short group transaction,
 * so the writer is never held long). Events: finished events below the cut go with their
 * deliveries, attempts, effects and receipts (their leaves stay, and the `events_before` mark is
 * raised first for the API's 410). With `log` and `input.audit`, each batch appends retention
 * leaves (src/audit/retention-leaf.ts) recording what it deleted, in its own transaction. Receipts: accepted receipts. Rejected:
 * rejected receipts. Dedup keys live in the events rows, so that kind has nothing to do.
 *
 * @example
 * ```ts
 * prepareRetentionStep(db)({ kind: "events", before, cursor: "", limit: 500, now, dryRun: false });
 * ```
 */
export function prepareRetentionStep(
  db: Database.Database,
  log?: AuditAppender,
): (input: RetentionStepInput) => RetentionStepResult {
  const pickEvents = db.prepare<[string, string, number, number], { id: string }>(
    `SELECT e.id FROM events e
     WHERE e.id > ? AND e.id <= ? AND e.received_at < ?
       AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status IN (${unfinished}))
     ORDER BY e.id LIMIT ?`,
  );
  const pickReceipts = db.prepare<[string, string, number, number], { id: string }>(
    `SELECT id FROM receipts WHERE id > ? AND id < ? AND received_at < ? AND event_id IS NOT NULL
     ORDER BY id LIMIT ?`,
  );
  const pickRejected = db.prepare<[string, string, number, number], { id: string }>(
    `SELECT id FROM receipts INDEXED BY receipts_rejected
     WHERE id > ? AND id < ? AND received_at < ? AND event_id IS NULL ORDER BY id LIMIT ?`,
  );
  const removeEvent = [
    "DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id = ?)",
    "DELETE FROM deliveries WHERE event_id = ?",
    "DELETE FROM effects WHERE event_id = ?",
    "DELETE FROM receipts WHERE event_id = ?",
    "DELETE FROM events WHERE id = ?",
  ].map((sql) => db.prepare<[string]>(sql));
  const removeReceipt = db.prepare<[string]>("DELETE FROM receipts WHERE id = ?");
  const receiptsOf = db.prepare<[string], { id: string }>(
    "SELECT id FROM receipts WHERE event_id = ? ORDER BY id",
  );
  // A first receipt deleted while its event stays: its remote address and secret index are kept
  // under the event's mark, so verify can still recompute the event's leaf (docs/audit.md).
  const keepFirstReceipt = db.prepare<[string]>(
    `INSERT OR REPLACE INTO retention_marks (name, value)
     SELECT 'first_receipt:' || r.event_id,
            json_object('remoteAddress', r.remote_address, 'secretIndex', r.secret_index)
     FROM receipts r JOIN events e ON e.id = r.event_id
     WHERE r.id = ? AND r.duplicate = 0 AND r.id = 'rcp_' || substr(e.id, 5)`,
  );
  const dropMark = db.prepare<[string]>(
    "DELETE FROM retention_marks WHERE name = 'first_receipt:' || ?",
  );
  /** Records a deletion in the audit log, in this same transaction (the audit log on). */
  const record = (
    input: RetentionStepInput,
    kind: "events" | "receipts",
    ids: readonly string[],
  ) => {
    if (!log || !input.audit || ids.length === 0) return;
    const sorted = [...ids].sort();
    log.appendRetention(ulid(input.now), {
      kind,
      firstId: sorted[0]!,
      lastId: sorted[sorted.length - 1]!,
      removed: ids.length,
      cut: Math.floor(input.before),
    });
  };
  const raiseMark = db.prepare<[string]>(
    `INSERT INTO retention_marks (name, value) VALUES ('events_before', ?)
     ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)`,
  );
  const scanWindow = prepareScanWindow(db, "events");
  /** Receipts are all taken but those another kind takes: no window (nothing to skip). */
  const whole: ScanWindow = { end: null, full: false };
  return (input) => {
    if (input.kind === "dedup") return { removed: 0, cursor: null };
    const before = Math.floor(input.before);
    const prefix = ulidTimePrefix(before);
    let rows: { id: string }[];
    let window = whole;
    if (input.kind === "events") {
      if (!input.dryRun) raiseMark.run(`evt_${prefix}`);
      // Events with unfinished deliveries are skipped: the walk is bounded (scan-window.ts).
      window = scanWindow(input.cursor, `evt_${prefix}`, input.limit);
      if (window.end === null) return { removed: 0, cursor: null };
      rows = pickEvents.all(input.cursor, window.end, before, input.limit);
      if (!input.dryRun) {
        const receipts: string[] = [];
        for (const { id } of rows) {
          for (const r of receiptsOf.all(id)) receipts.push(r.id);
          for (const remove of removeEvent) remove.run(id);
          dropMark.run(id);
        }
        record(
          input,
          "events",
          rows.map((r) => r.id),
        );
        record(input, "receipts", receipts);
      }
    } else {
      const pick = input.kind === "receipts" ? pickReceipts : pickRejected;
      rows = pick.all(input.cursor, `rcp_${prefix}`, before, input.limit);
      if (!input.dryRun) {
        for (const { id } of rows) {
          if (input.kind === "receipts" && input.audit) keepFirstReceipt.run(id);
          removeReceipt.run(id);
        }
        if (input.kind === "receipts")
          record(
            input,
            "receipts",
            rows.map((r) => r.id),
          );
      }
    }
    return {
      removed: rows.length,
      cursor: nextCursor(rows, input.limit, window),
    };
  };
}
