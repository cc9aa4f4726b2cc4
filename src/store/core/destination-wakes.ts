import type { AlertRecord } from "../alert-types.ts";
import type { DestinationState, DestinationStateRow } from "../forward-types.ts";
import { recordAlertsProgram } from "./alert-record.ts";
import { indexedBy } from "./read-driver.ts";
import type { SqlDialect, SqlStatement } from "./sql-template.ts";
import { type DestinationRow, destinationColumns, toDestinationState } from "./views.ts";
import { type ProgramContext, type StepResults, steps } from "./write-program.ts";

/** `deliveries.circuit_wait` is set, as the partial index deliveries_circuit_wait spells it. */
const waiting = (dialect: SqlDialect) =>
  dialect === "postgres" ? "circuit_wait" : "circuit_wait = 1";
/** Clears `deliveries.circuit_wait` (a boolean on PostgreSQL, 0/1 on SQLite). */
const unmark = (dialect: SqlDialect) =>
  dialect === "postgres" ? "circuit_wait = false" : "circuit_wait = 0";

/** What `setDestinationStateProgram` sets. */
export interface DestinationStateChange {
  readonly name: string;
  readonly state: DestinationState;
  readonly reason: string | null;
  readonly now: number;
  readonly alert?: AlertRecord | undefined;
}

/**
 * Sets a destination's state, in one transaction: `active` also resets its breaker (failures,
 * open circuit, trials) and makes its parked pending deliveries (deferred while paused) due at
 * once; when the state was set, `alert` is recorded with it. Answers the destination's state,
 * or null when there is no such destination (then nothing is woken or recorded).
 *
 * @example
 * ```ts
 * const row = yield* setDestinationStateProgram(ctx, { name: "app", state: "paused", reason: "maintenance", now });
 * ```
 */
export function* setDestinationStateProgram(
  ctx: ProgramContext,
  input: DestinationStateChange,
): Generator<SqlStatement[], DestinationStateRow | null, StepResults> {
  const at = Math.floor(input.now);
  const active = input.state === "active";
  const reset = active
    ? `, failures = 0, open_until = NULL, trials_taken = 0, trials_passed = 0, trials_until = NULL`
    : "";
  const [changed] = yield* steps(ctx, [
    [
      `UPDATE ${ctx.table("destinations")} SET state = ?, reason = ?, changed_at = ?${reset}
       WHERE name = ? RETURNING ${destinationColumns}`,
      [input.state, input.reason, at, input.name],
    ],
  ]);
  const row = changed?.rows[0] as DestinationRow | undefined;
  if (!row) return null;
  if (active) {
    yield* steps(ctx, [
      [
        `UPDATE ${ctx.table("deliveries")} SET run_at = ?, updated_at = ?, ${unmark(ctx.dialect)}
         WHERE status = 'pending' AND target = ? AND run_at > ?`,
        [at, at, input.name, at],
      ],
    ]);
  }
  if (input.alert) {
    yield* recordAlertsProgram(ctx, {
      occurrences: input.alert.occurrences,
      now: input.now,
      windowMs: input.alert.windowMs,
    });
  }
  return toDestinationState(row);
}

/** What `closeCircuitProgram` closes. */
export interface CircuitClose {
  readonly name: string;
  readonly openUntil: number;
  readonly now: number;
}

/**
 * Closes a destination's circuit opened until `openUntil`, in one transaction: resets its
 * breaker counters and makes every pending delivery waiting for the circuit due by `now`,
 * unmarked. Answers how many were woken, or null when that period was over already (closed or
 * reopened by another process: nothing changes).
 *
 * @example
 * ```ts
 * const woken = yield* closeCircuitProgram(ctx, { name: "app", openUntil, now: Date.now() });
 * ```
 */
export function* closeCircuitProgram(
  ctx: ProgramContext,
  input: CircuitClose,
): Generator<SqlStatement[], number | null, StepResults> {
  const deliveries = ctx.table("deliveries");
  const [closed] = yield* steps(ctx, [
    [
      `UPDATE ${ctx.table("destinations")} SET open_until = NULL, failures = 0, trials_taken = 0,
         trials_passed = 0, trials_until = NULL, window_start = 0, window_calls = 0,
         window_failures = 0, prev_calls = 0, prev_failures = 0
       WHERE name = ? AND open_until = ?`,
      [input.name, Math.floor(input.openUntil)],
    ],
  ]);
  if (closed?.rowCount !== 1) return null;
  const at = Math.floor(input.now);
  const earlier = ctx.dialect === "postgres" ? "LEAST(run_at, ?)" : "min(run_at, ?)";
  const waits = `target = ? AND status = 'pending' AND ${waiting(ctx.dialect)}`;
  const [woken] = yield* steps(ctx, [
    [
      `UPDATE ${deliveries} SET run_at = ${earlier}, ${unmark(ctx.dialect)}, updated_at = ?
       WHERE id IN (SELECT id FROM ${deliveries}${indexedBy(ctx.dialect, "deliveries_circuit_wait")}
                    WHERE ${waits})
         AND ${waits}`,
      [at, at, input.name, input.name],
    ],
  ]);
  return woken?.rowCount ?? 0;
}

/**
 * The one statement of `wakeCircuitWaiting`: up to `limit` of the destination's pending
 * deliveries waiting for its circuit made due at `now`, earliest first, still marked; its
 * row count is how many were woken.
 *
 * @example
 * ```ts
 * const [result] = await executeText(driver, [wakeCircuitWaitingSql(driver.dialect, "deliveries", "app", now, 2)]);
 * ```
 */
export function wakeCircuitWaitingSql(
  dialect: SqlDialect,
  deliveries: string,
  name: string,
  now: number,
  limit: number,
): [string, unknown[]] {
  const at = Math.floor(now);
  return [
    `UPDATE ${deliveries} SET run_at = ?, updated_at = ?
     WHERE id IN (SELECT id FROM ${deliveries}${indexedBy(dialect, "deliveries_circuit_wait")}
                  WHERE target = ? AND status = 'pending' AND ${waiting(dialect)} AND run_at > ?
                  ORDER BY run_at LIMIT ?)
       AND status = 'pending'`,
    [at, at, name, at, limit],
  ];
}
