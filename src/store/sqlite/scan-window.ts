import type Database from "better-sqlite3";

import { SCAN_FACTOR, type ScanWindow } from "../core/scan-window.ts";

/**
 * Prepares the read that bounds a retention batch: the next `limit × SCAN_FACTOR` ids of
 * `table` after a cursor and below an id, walked on the primary key's index alone.
 *
 * @example
 * ```ts
 * const window = prepareScanWindow(db, "events")("", "evt_01J…", 500);
 * // pick with `id > cursor AND id <= window.end`; if window.full, continue from window.end
 * ```
 */
export function prepareScanWindow(
  db: Database.Database,
  table: "events",
): (after: string, below: string, limit: number) => ScanWindow {
  const scan = db.prepare<[string, string, number], { end: string | null; n: number }>(
    `SELECT max(id) AS end, count(*) AS n
     FROM (SELECT id FROM ${table} WHERE id > ? AND id < ? ORDER BY id LIMIT ?)`,
  );
  return (after, below, limit) => {
    const bound = limit * SCAN_FACTOR;
    const row = scan.get(after, below, bound);
    return { end: row?.end ?? null, full: (row?.n ?? 0) >= bound };
  };
}
