import type Database from "better-sqlite3";
import { ulidTimePrefix } from "../../ids.ts";
import { purgeDigests } from "../purge-row.ts";
import {
  type PurgeBatchInput,
  type PurgeBatchResult,
  UNFINISHED_DELIVERY_STATUSES,
} from "../purge-types.ts";
import { nextCursor, prepareScanWindow } from "./scan-window.ts";

const unfinished = UNFINISHED_DELIVERY_STATUSES.map((s) => `'${s}'`).join(", ");

/**
 * Prepares one batch of payload purging (a write op: one short group transaction per batch, so
 * no long lock). Walks events by primary key below the `before` time prefix from a cursor, at
 * most `limit × SCAN_FACTOR` of them (scan-window.ts), skips
 * purged ones and those with an unfinished delivery, keeps the body and header digests, empties
 * body and headers and sets purged_at. The audit leaf is untouched.
 *
 * @example
 * ```ts
 * prepareSqlitePurge(db)({ before, afterId: "", limit: 500, now: Date.now(), dryRun: false });
 * ```
 */
export function prepareSqlitePurge(
  db: Database.Database,
): (input: PurgeBatchInput) => PurgeBatchResult {
  const pick = db.prepare<
    [string, string, number, number],
    { id: string; body: Buffer; headers: string }
  >(
    `SELECT e.id, e.body, e.headers FROM events e
     WHERE e.id > ? AND e.id <= ? AND e.purged_at IS NULL AND e.received_at < ?
       AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status IN (${unfinished}))
     ORDER BY e.id LIMIT ?`,
  );
  const purge = db.prepare(
    `UPDATE events SET body = X'', headers = '[]', purged_at = ?, body_sha256 = ?, headers_sha256 = ?
     WHERE id = ?`,
  );
  const scanWindow = prepareScanWindow(db, "events");
  return (input) => {
    const window = scanWindow(input.afterId, `evt_${ulidTimePrefix(input.before)}`, input.limit);
    if (window.end === null) return { purged: 0, nextAfterId: null };
    const rows = pick.all(input.afterId, window.end, Math.floor(input.before), input.limit);
    if (!input.dryRun) {
      for (const row of rows) {
        const digests = purgeDigests(row.body, JSON.parse(row.headers) as [string, string][]);
        purge.run(input.now, digests.bodySha256, digests.headersSha256, row.id);
      }
    }
    return {
      purged: rows.length,
      nextAfterId: nextCursor(rows, input.limit, window),
    };
  };
}
