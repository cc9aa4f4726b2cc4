import type Database from "better-sqlite3";

// Claimed but never started (shutdown): back to pending as if never claimed.
const releaseSql = `
  UPDATE deliveries
  SET status = 'pending', attempts = attempts - 1, lease_owner = NULL, lease_expires_at = NULL,
      run_at = @now, updated_at = @now
  WHERE id IN (SELECT value FROM json_each(@ids)) AND status = 'running' AND lease_owner = @workerId
  RETURNING id, attempts + 1 AS attempt`;

const dropAttemptSql = "DELETE FROM attempts WHERE delivery_id = ? AND attempt = ?";

const expiredAttemptsSql = `
  UPDATE attempts SET ended_at = @now, outcome = 'lease-expired', error_message = 'lease expired'
  WHERE outcome = 'running' AND delivery_id IN (
    SELECT id FROM deliveries WHERE status = 'running' AND lease_expires_at < @now)`;

const rescueSql = `
  UPDATE deliveries
  SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, run_at = @now,
      last_error = 'lease expired (worker crashed or stalled)', updated_at = @now
  WHERE status = 'running' AND lease_expires_at < @now`;

/**
 * Prepares the lease operations: `release` (claimed but not started: uncounted) and `rescue`
 * (leases that expired before `now` go back to pending, their attempt recorded as
 * `lease-expired`; a lease is valid through its expiry ms). Heartbeats and abandoned handlers
 * are core's (core/queue-writes.ts).
 *
 * @example
 * ```ts
 * const leases = prepareLeases(db);
 * leases.release(workerId, ["dlv_…"], now);
 * leases.rescue(now);
 * ```
 */
export function prepareLeases(db: Database.Database) {
  const release = db.prepare<[Record<string, unknown>], { id: string; attempt: number }>(
    releaseSql,
  );
  const dropAttempt = db.prepare(dropAttemptSql);
  const expiredAttempts = db.prepare(expiredAttemptsSql);
  const rescue = db.prepare(rescueSql);
  return {
    release(workerId: string, ids: readonly string[], now: number): number {
      if (ids.length === 0) return 0;
      const released = release.all({ workerId, ids: JSON.stringify(ids), now: Math.floor(now) });
      for (const row of released) dropAttempt.run(row.id, row.attempt);
      return released.length;
    },
    rescue(now: number): number {
      const at = Math.floor(now);
      expiredAttempts.run({ now: at });
      return rescue.run({ now: at }).changes;
    },
  };
}
