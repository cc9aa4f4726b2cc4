import type Database from "better-sqlite3";
import {
  destinationColumns as columns,
  type DestinationRow,
  toDestinationState,
} from "../core/views.ts";
import type { AttemptResponse, DestinationState, DestinationStateRow } from "../forward-types.ts";

/**
 * Prepares the destination reads (run on the read connection).
 *
 * @example
 * ```ts
 * prepareDestinationReads(db).list();
 * ```
 */
export function prepareDestinationReads(db: Database.Database) {
  const list = db.prepare<[], DestinationRow>(`SELECT ${columns} FROM destinations ORDER BY name`);
  const running = db.prepare<[string], { target: string; n: number }>(
    `SELECT target, count(*) AS n FROM deliveries INDEXED BY deliveries_running_lease
     WHERE status = 'running' AND target IN (SELECT value FROM json_each(?)) GROUP BY target`,
  );
  return {
    list: () => list.all().map(toDestinationState),
    countRunning(targets: readonly string[]): Record<string, number> {
      const counts: Record<string, number> = {};
      for (const row of running.all(JSON.stringify(targets))) counts[row.target] = row.n;
      return counts;
    },
  };
}

/**
 * Prepares the destination writes, each run inside the caller's (group) transaction: state
 * changes, the circuit breaker, the rate window, deferral of claimed deliveries and the attempt's
 * response record.
 *
 * @example
 * ```ts
 * const ops = prepareDestinationWrites(db);
 * ops.setState("app", "paused", "maintenance", Date.now());
 * ```
 */
export function prepareDestinationWrites(db: Database.Database) {
  const ensure = db.prepare(
    "INSERT INTO destinations (name) VALUES (?) ON CONFLICT (name) DO NOTHING",
  );
  const byName = db.prepare<[string], DestinationRow>(
    `SELECT ${columns} FROM destinations WHERE name = ?`,
  );
  const setState = db.prepare(
    `UPDATE destinations SET state = @state, reason = @reason, changed_at = @now,
       failures = CASE WHEN @state = 'active' THEN 0 ELSE failures END,
       open_until = CASE WHEN @state = 'active' THEN NULL ELSE open_until END
     WHERE name = @name`,
  );
  // Parked deliveries (deferred while paused) become due at once on resume.
  const wake = db.prepare(
    `UPDATE deliveries SET run_at = @now, updated_at = @now
     WHERE status = 'pending' AND target = @name AND run_at > @now`,
  );
  const rate = db.prepare(
    `UPDATE destinations
     SET rate_count = CASE WHEN rate_window = @window THEN rate_count + 1 ELSE 1 END, rate_window = @window
     WHERE name = @name AND (rate_window <> @window OR rate_count < @limit)`,
  );
  const probe = db.prepare(
    `UPDATE destinations SET open_until = @until
     WHERE name = @name AND open_until IS NOT NULL AND open_until <= @now`,
  );
  const succeeded = db.prepare(
    "UPDATE destinations SET failures = 0, open_until = NULL WHERE name = ? AND (failures <> 0 OR open_until IS NOT NULL)",
  );
  const failed = db.prepare(
    `UPDATE destinations SET failures = failures + 1,
       open_until = CASE WHEN failures + 1 >= @threshold THEN @until ELSE open_until END
     WHERE name = @name`,
  );
  const defer = db.prepare<[Record<string, unknown>], { id: string; attempt: number }>(
    `UPDATE deliveries
     SET status = 'pending', attempts = attempts - 1, lease_owner = NULL, lease_expires_at = NULL,
         run_at = @runAt, updated_at = @now
     WHERE id IN (SELECT value FROM json_each(@ids)) AND status = 'running' AND lease_owner = @workerId
     RETURNING id, attempts + 1 AS attempt`,
  );
  const dropAttempt = db.prepare("DELETE FROM attempts WHERE delivery_id = ? AND attempt = ?");
  const response = db.prepare(
    `UPDATE attempts SET response_status = @status, response_headers = @headers, response_body = @body,
       latency_ms = @latencyMs, error_class = @errorClass
     WHERE delivery_id = @deliveryId AND attempt = @attempt`,
  );
  const current = (name: string) => {
    const row = byName.get(name);
    return row ? toDestinationState(row) : null;
  };
  return {
    ensureDestinations(names: readonly string[]): void {
      for (const name of names) ensure.run(name);
    },
    setDestinationState(
      name: string,
      state: DestinationState,
      reason: string | null,
      now: number,
    ): DestinationStateRow | null {
      const at = Math.floor(now);
      if (setState.run({ name, state, reason, now: at }).changes === 0) return null;
      if (state === "active") wake.run({ name, now: at });
      return current(name);
    },
    takeRateSlot(name: string, windowStart: number, limit: number): boolean {
      return rate.run({ name, window: Math.floor(windowStart), limit }).changes === 1;
    },
    takeProbe(name: string, now: number, cooldownMs: number): boolean {
      const at = Math.floor(now);
      return probe.run({ name, now: at, until: at + cooldownMs }).changes === 1;
    },
    recordCircuit(
      name: string,
      ok: boolean,
      now: number,
      threshold: number,
      cooldownMs: number,
    ): DestinationStateRow | null {
      if (ok) succeeded.run(name);
      else failed.run({ name, threshold, until: Math.floor(now) + cooldownMs });
      return current(name);
    },
    deferDeliveries(workerId: string, ids: readonly string[], runAt: number, now: number): number {
      if (ids.length === 0) return 0;
      const rows = defer.all({
        workerId,
        ids: JSON.stringify(ids),
        runAt: Math.floor(runAt),
        now: Math.floor(now),
      });
      for (const row of rows) dropAttempt.run(row.id, row.attempt);
      return rows.length;
    },
    recordAttemptResponse(deliveryId: string, attempt: number, r: AttemptResponse): void {
      response.run({
        deliveryId,
        attempt,
        status: r.status,
        headers: r.headers === null ? null : JSON.stringify(r.headers),
        body: r.body,
        latencyMs: Math.round(r.latencyMs),
        errorClass: r.errorClass,
      });
    },
  };
}
