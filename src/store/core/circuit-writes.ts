import type { DestinationStore } from "../forward-types.ts";
import { listValue } from "./sql-template.ts";
import { type DestinationRow, destinationColumns, toDestinationState } from "./views.ts";
import { executeText, greatestSql, listRowsSql, type WriteDriver } from "./write-driver.ts";

/** The destination writes core implements (drivers leave them out). */
export type CoreCircuitWrites =
  | "ensureDestinations"
  | "takeRateSlot"
  | "recordCalls"
  | "openCircuit"
  | "takeTrial"
  | "endTrial";

/**
 * The destinations' rate window and circuit breaker counters, once for both stores over a
 * driver's `execute` primitive: each rule is one conditional UPDATE, so every process sharing
 * the database counts in one window and one circuit (a change that lost a race changes nothing
 * and answers null or false). Waking and deferring deliveries are core's too (destination-wakes.ts, queue-claim.ts).
 *
 * @example
 * ```ts
 * const writes = circuitWrites(driver);
 * await writes.takeRateSlot("app", 1_700_000_000_000, 50); // true: a slot of the window was free
 * ```
 */
export function circuitWrites(driver: WriteDriver): Pick<DestinationStore, CoreCircuitWrites> {
  const destinations = driver.table("destinations");
  const greatest = (a: string, b: string) => greatestSql(driver.dialect, a, b);
  /** The destination's state after an UPDATE … RETURNING its columns; null when none changed. */
  const stateOf = async (text: string, params: unknown[]) => {
    const [result] = await executeText(driver, [
      [`${text} RETURNING ${destinationColumns}`, params],
    ]);
    const row = result?.rows[0] as DestinationRow | undefined;
    return row ? toDestinationState(row) : null;
  };
  return {
    async ensureDestinations(names) {
      if (names.length === 0) return;
      // `WHERE true` lets SQLite tell the upsert clause from a join constraint.
      await executeText(driver, [
        [
          `INSERT INTO ${destinations} (name) SELECT value FROM (${listRowsSql(driver.dialect)}) l
           WHERE true ON CONFLICT (name) DO NOTHING`,
          [listValue(driver.dialect, names)],
        ],
      ]);
    },
    async takeRateSlot(name, windowStart, limit) {
      const window = Math.floor(windowStart);
      const [result] = await executeText(driver, [
        [
          `UPDATE ${destinations}
           SET rate_count = CASE WHEN rate_window = ? THEN rate_count + 1 ELSE 1 END, rate_window = ?
           WHERE name = ? AND (rate_window <> ? OR rate_count < ?)`,
          [window, window, name, window, limit],
        ],
      ]);
      return result?.rowCount === 1;
    },
    recordCalls(name, calls, windowStart, windowMs) {
      const start = Math.floor(windowStart);
      const previous = start - Math.floor(windowMs);
      // A bucket older than the stored one (a clock behind the others') counts in the stored one.
      return stateOf(
        `UPDATE ${destinations} SET
           prev_calls = CASE WHEN window_start >= ? THEN prev_calls
                             WHEN window_start = ? THEN window_calls ELSE 0 END,
           prev_failures = CASE WHEN window_start >= ? THEN prev_failures
                                WHEN window_start = ? THEN window_failures ELSE 0 END,
           window_calls = CASE WHEN window_start >= ? THEN window_calls ELSE 0 END + ?,
           window_failures = CASE WHEN window_start >= ? THEN window_failures ELSE 0 END + ?,
           window_start = ${greatest("window_start", "?")},
           failures = CASE WHEN ? = 1 THEN 0 ELSE failures END + ?
         WHERE name = ?`,
        [
          start,
          previous,
          start,
          previous,
          start,
          calls.calls,
          start,
          calls.failures,
          start,
          calls.brokeRun ? 1 : 0,
          calls.downs,
          name,
        ],
      );
    },
    openCircuit(name, until, expected) {
      return stateOf(
        `UPDATE ${destinations}
         SET open_until = ?, trials_taken = 0, trials_passed = 0, trials_until = NULL
         WHERE name = ? AND open_until IS NOT DISTINCT FROM CAST(? AS bigint)`,
        [Math.floor(until), name, expected === null ? null : Math.floor(expected)],
      );
    },
    async takeTrial(name, openUntil, now, limit, holdUntil) {
      const at = Math.floor(now);
      // Lapsed (every unreported trial's hold is over): their slots are free again, passes stay.
      const [taken, current] = await executeText(driver, [
        [
          `UPDATE ${destinations} SET
             trials_taken = CASE WHEN trials_until <= ? THEN trials_passed ELSE trials_taken END + 1,
             trials_until = ${greatest("coalesce(trials_until, 0)", "?")}
           WHERE name = ? AND open_until = ? AND open_until <= ?
             AND CASE WHEN trials_until <= ? THEN trials_passed ELSE trials_taken END < ?`,
          [at, Math.floor(holdUntil), name, Math.floor(openUntil), at, at, limit],
        ],
        [`SELECT open_until FROM ${destinations} WHERE name = ?`, [name]],
      ]);
      const until = current?.rows[0]?.open_until;
      return {
        taken: taken?.rowCount === 1,
        openUntil: until === null || until === undefined ? null : Number(until),
      };
    },
    endTrial(name, openUntil, passed) {
      const pass = passed ? 1 : 0;
      return stateOf(
        `UPDATE ${destinations} SET
           trials_passed = trials_passed + ?,
           trials_taken = CASE WHEN ? = 1 THEN ${greatest("trials_taken", "trials_passed + 1")}
                               ELSE ${greatest("trials_passed", "trials_taken - 1")} END
         WHERE name = ? AND open_until = ?`,
        [pass, pass, name, Math.floor(openUntil)],
      );
    },
  };
}
