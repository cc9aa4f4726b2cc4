import { foldTarget } from "../alert-fold.ts";
import type { AlertOccurrence } from "../alert-types.ts";
import type { SqlStatement } from "./sql-template.ts";
import { type ProgramContext, type StepResults, steps } from "./write-program.ts";

/** What `recordAlertsProgram` records: the occurrences, at `now`, folded within `windowMs`. */
export interface AlertRecordInput {
  readonly occurrences: readonly AlertOccurrence[];
  readonly now: number;
  readonly windowMs: number;
}

/**
 * Records alert occurrences in the outbox, inside the transaction running it (a state change
 * that alerts runs it in its own, so the alert commits with the change). A dead letter's
 * occurrences are recorded only by the transaction that marks it alerted (one mark for all its
 * sinks); each occurrence folds into its condition's waiting alert, or makes a new alert whose
 * slot is now or one window after the previous slot. On PostgreSQL a transaction-scoped
 * advisory lock per condition makes processes folding one condition at once make one alert.
 *
 * @example
 * ```ts
 * yield* recordAlertsProgram(ctx, { occurrences, now: Date.now(), windowMs: 60_000 });
 * ```
 */
export function* recordAlertsProgram(
  ctx: ProgramContext,
  input: AlertRecordInput,
): Generator<SqlStatement[], void, StepResults> {
  const now = Math.floor(input.now);
  const outbox = ctx.table("alert_outbox");
  // One dead letter may have an occurrence per sink (webhook, function): marked once for all.
  const marked = new Map<string, boolean>();
  for (const { deadLetterId, ...occurrence } of input.occurrences) {
    if (deadLetterId !== undefined) {
      if (!marked.has(deadLetterId)) {
        // Row-locked on PostgreSQL: a second process marking it waits, then sees it marked.
        const [mark] = yield* steps(ctx, [
          [
            `UPDATE ${ctx.table("deliveries")} SET alerted_at = ?
             WHERE id = ? AND status = 'dead' AND alerted_at IS NULL`,
            [now, deadLetterId],
          ],
        ]);
        marked.set(deadLetterId, mark?.rowCount === 1);
      }
      if (!marked.get(deadLetterId)) continue;
    }
    const lock: Array<[string, unknown[]]> =
      ctx.dialect === "postgres"
        ? [
            [
              "SELECT pg_advisory_xact_lock(hashtext(?))",
              [`hookinbox-alert:${occurrence.condition}`],
            ],
          ]
        : [];
    const found = yield* steps(ctx, [
      ...lock,
      [
        `SELECT (SELECT id FROM ${outbox} WHERE condition = ? AND attempts = 0
                   AND delivered_at IS NULL AND slot_at > ? ORDER BY slot_at DESC LIMIT 1) AS waiting,
                (SELECT max(slot_at) FROM ${outbox} WHERE condition = ?) AS slot`,
        [occurrence.condition, now, occurrence.condition],
      ],
    ]);
    const row = found[found.length - 1]?.rows[0];
    const target = foldTarget({
      waiting: row?.waiting == null ? null : String(row.waiting),
      lastSlot: row?.slot == null ? null : Number(row.slot),
      now,
      windowMs: input.windowMs,
    });
    const payload = JSON.stringify(occurrence.payload);
    yield* steps(ctx, [
      "foldInto" in target
        ? [
            `UPDATE ${outbox} SET count = count + 1, payload = ?, last_at = ? WHERE id = ?`,
            [payload, now, target.foldInto],
          ]
        : [
            `INSERT INTO ${outbox} (id, condition, kind, payload, created_at, last_at, slot_at, due_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
            [
              target.id,
              occurrence.condition,
              occurrence.kind,
              payload,
              now,
              now,
              target.newSlot,
              target.newSlot,
            ],
          ],
    ]);
  }
}
