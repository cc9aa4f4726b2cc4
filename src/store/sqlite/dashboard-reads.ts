import type Database from "better-sqlite3";

/**
 * Prepares the dashboard's search by dedup key on SQLite: the events of `sources` stored under
 * a key, newest first (the events table keeps the (source, dedup_key) unique index). The
 * dashboard's other reads are core's (core/dashboard-reads.ts).
 *
 * @example
 * ```ts
 * const eventIdsByDedupKey = prepareEventIdsByDedupKey(db);
 * eventIdsByDedupKey(["stripe"], "evt_1"); // ["evt_01J…"]
 * ```
 */
export function prepareEventIdsByDedupKey(db: Database.Database) {
  const byKey = db.prepare<[string, string], { id: string }>(
    "SELECT id FROM events WHERE source = ? AND dedup_key = ?",
  );
  return (sources: readonly string[], dedupKey: string): string[] =>
    sources
      .flatMap((source) => byKey.all(source, dedupKey).map((row) => row.id))
      .sort()
      .reverse();
}
