import type Database from "better-sqlite3";

/**
 * How many rows one retention batch may walk, as a multiple of its limit. A batch skips rows it
 * must keep (an event with an unfinished delivery, a payload purged already) and runs inside the
 * write transaction; unbounded, a batch behind a backlog of 2.4M unfinished deliveries walked
 * long enough to hold SQLite's write lock past the gateway's busy timeout (bench:soak answered
 * 503 HOOKINBOX_STORE_UNAVAILABLE).
 */
export const SCAN_FACTOR = 10;

/** The ids one batch may look at: up to `end` (inclusive); `full` when the bound was reached. */
export interface ScanWindow {
  readonly end: string | null;
  readonly full: boolean;
}

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

/**
 * Where the next batch starts: after the last row taken when the batch was full (rows may be
 * left in the window), else after the window when it was full, else nowhere (done).
 *
 * @example
 * ```ts
 * nextCursor(rows, 500, window); // "evt_…" or null
 * ```
 */
export function nextCursor(
  rows: readonly { id: string }[],
  limit: number,
  window: ScanWindow,
): string | null {
  if (rows.length >= limit) return rows[rows.length - 1]!.id;
  return window.full ? window.end : null;
}
