import type Database from "better-sqlite3";

const markSql = `
  UPDATE deliveries SET alerted_at = @now
  WHERE id IN (SELECT value FROM json_each(@ids)) AND status = 'dead' AND alerted_at IS NULL`;

/**
 * Prepares the mark that confirms dead-letter alerts (the alert hook returned), run inside the
 * caller's (group) transaction. The worker alerts right after it dead-letters and marks after
 * the hook returned, and a sweep retries unconfirmed ones, so each dead letter alerts once in
 * normal operation and at least once across crashes. The reports themselves are core's
 * (core/report-reads.ts).
 *
 * @example
 * ```ts
 * const markAlerted = prepareMarkAlerted(db);
 * markAlerted(["dlv_…"], Date.now());
 * ```
 */
export function prepareMarkAlerted(db: Database.Database) {
  const mark = db.prepare(markSql);
  return (ids: readonly string[], now: number): void => {
    if (ids.length > 0) mark.run({ ids: JSON.stringify(ids), now: Math.floor(now) });
  };
}
