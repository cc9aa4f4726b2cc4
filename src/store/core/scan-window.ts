// The bounded walk of SQLite's retention and purge batches (a batch runs inside the write
// transaction there), written once for core's purge and the SQLite retention step.

/**
 * How many rows one retention batch may walk, as a multiple of its limit. A batch skips rows it
 * must keep (an event with an unfinished delivery, a payload purged already) and runs inside the
 * write transaction; unbounded, a batch behind a backlog of 2.4M unfinished deliveries walked
 * long enough to hold SQLite's write lock past the gateway's busy timeout (bench:soak answered
 * 503 HOOKINBOX_STORE_UNAVAILABLE). PostgreSQL's batches are not bounded so.
 *
 * @example
 * ```ts
 * const walked = limit * SCAN_FACTOR;
 * ```
 */
export const SCAN_FACTOR = 10;

/**
 * The ids one batch may look at: up to `end` (inclusive); `full` when the bound was reached.
 *
 * @example
 * ```ts
 * const window: ScanWindow = { end: "evt_01J…", full: true };
 * ```
 */
export interface ScanWindow {
  readonly end: string | null;
  readonly full: boolean;
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
