import { ulid } from "../../ids.ts";
import type { EffectClaim, EffectClaimInput, EffectView } from "../queue-types.ts";
import { recordAlertsProgram } from "./alert-record.ts";
import { decideEffectClaim, type EffectRow, effectColumns, toEffectView } from "./effect-claim.ts";
import { effectHeldAlert } from "./effects.ts";
import type { SqlStatement } from "./sql-template.ts";
import { type ProgramContext, type StepResults, steps } from "./write-program.ts";

/** The row lock a read takes before the same transaction changes the row (PostgreSQL only). */
const forUpdate = (ctx: ProgramContext, of = "") =>
  ctx.dialect === "postgres" ? ` FOR UPDATE${of === "" ? "" : ` OF ${of}`}` : "";

/**
 * Claims an effect, in one transaction: insert-or-get under the UNIQUE (event_id, target, name)
 * constraint (the first claim wins), then, for a row already there, read it (row-locked on
 * PostgreSQL) with the outcome of the attempt holding it, decide with `decideEffectClaim`, make
 * the write it asks for (take the claim over, or hold the effect), and record the held-effect
 * alert when `effectHeldAlert` says this claim raises it.
 *
 * @example
 * ```ts
 * const claim = yield* claimEffectProgram(ctx, { eventId, target, name: "email", claimant, onStale: "hold", staleAfterMs: 300_000, now });
 * ```
 */
export function* claimEffectProgram(
  ctx: ProgramContext,
  input: EffectClaimInput,
): Generator<SqlStatement[], EffectClaim, StepResults> {
  const now = Math.floor(input.now);
  const effects = ctx.table("effects");
  const [inserted] = yield* steps(ctx, [
    [
      `INSERT INTO ${effects} (id, event_id, target, name, status, on_stale, stale_after_ms, claimant, claimed_at, claims)
       VALUES (?, ?, ?, ?, 'processing', ?, ?, ?, ?, 1)
       ON CONFLICT (event_id, target, name) DO NOTHING RETURNING id`,
      [
        `eff_${ulid(now)}`,
        input.eventId,
        input.target,
        input.name,
        input.onStale,
        input.staleAfterMs,
        input.claimant,
        now,
      ],
    ],
  ]);
  const insertedId = inserted?.rows[0]?.id;
  if (insertedId !== undefined) {
    return { state: "claimed", effectId: String(insertedId), reclaimed: false };
  }
  const resultText = ctx.dialect === "postgres" ? "e.result::text" : "e.result";
  const [existing] = yield* steps(ctx, [
    [
      `SELECT e.id, e.status, e.claimant, e.claimed_at, ${resultText} AS result,
              a.outcome AS claimant_outcome
       FROM ${effects} e LEFT JOIN ${ctx.table("attempts")} a ON a.id = e.claimant
       WHERE e.event_id = ? AND e.target = ? AND e.name = ?${forUpdate(ctx, "e")}`,
      [input.eventId, input.target, input.name],
    ],
  ]);
  const row = existing?.rows[0];
  if (!row) throw new Error("effect claim: conflicting row not found");
  const { claim, write } = decideEffectClaim(
    {
      id: String(row.id),
      status: row.status as "processing" | "done" | "held",
      claimant: row.claimant == null ? null : String(row.claimant),
      claimed_at: row.claimed_at == null ? null : Number(row.claimed_at),
      result: row.result == null ? undefined : JSON.parse(String(row.result)),
      claimant_outcome: row.claimant_outcome == null ? null : String(row.claimant_outcome),
    },
    input,
    now,
  );
  if (write === "reclaim") {
    yield* steps(ctx, [
      [
        `UPDATE ${effects} SET claimant = ?, claimed_at = ?, claims = claims + 1, on_stale = ?,
           stale_after_ms = ?
         WHERE id = ? AND status = 'processing'`,
        [input.claimant, now, input.onStale, input.staleAfterMs, row.id],
      ],
    ]);
  } else if (write === "hold") {
    yield* steps(ctx, [
      [
        `UPDATE ${effects} SET status = 'held', held_at = ? WHERE id = ? AND status = 'processing'`,
        [now, row.id],
      ],
    ]);
  }
  // Whether this claim raises the held-effect alert is decided once, here; it commits with the hold.
  const alert = effectHeldAlert(claim, input);
  if (alert) yield* recordAlertsProgram(ctx, { occurrences: alert.occurrences, ...alert.at });
  return claim;
}

/** What `resolveEffectProgram` resolves. */
export interface EffectResolution {
  readonly effectId: string;
  readonly resolution: "done" | "release";
  readonly now: number;
  readonly result?: unknown;
}

/**
 * Resolves a held effect by hand, in one transaction: `done` stores its result, `release` drops
 * the row so the next try claims it afresh. Answers the effect's view (null: no such effect), or
 * the status of an effect that is not held (the Store method refuses it; a live claim is never
 * touched).
 *
 * @example
 * ```ts
 * const outcome = yield* resolveEffectProgram(ctx, { effectId, resolution: "done", now, result: { sent: true } });
 * ```
 */
export function* resolveEffectProgram(
  ctx: ProgramContext,
  input: EffectResolution,
): Generator<SqlStatement[], { view: EffectView | null } | { notHeld: string }, StepResults> {
  const effects = ctx.table("effects");
  const byId = `SELECT ${effectColumns} FROM ${effects} WHERE id = ?`;
  const [found] = yield* steps(ctx, [[`${byId}${forUpdate(ctx)}`, [input.effectId]]]);
  const row = found?.rows[0] as EffectRow | undefined;
  if (!row) return { view: null };
  if (row.status !== "held") return { notHeld: row.status };
  if (input.resolution === "release") {
    yield* steps(ctx, [[`DELETE FROM ${effects} WHERE id = ? AND status = 'held'`, [row.id]]]);
    // Released: the row is gone and the next try claims the effect afresh.
    return { view: { ...toEffectView(row), status: "processing", claims: 0, claimedAt: null } };
  }
  const json = ctx.dialect === "postgres" ? "CAST(? AS jsonb)" : "?";
  const [, done] = yield* steps(ctx, [
    [
      `UPDATE ${effects} SET status = 'done', claimant = NULL, result = ${json}, completed_at = ?
       WHERE id = ? AND status = 'held'`,
      [
        input.result === undefined ? null : JSON.stringify(input.result),
        Math.floor(input.now),
        row.id,
      ],
    ],
    [byId, [row.id]],
  ]);
  const after = done?.rows[0] as EffectRow | undefined;
  return { view: after ? toEffectView(after) : null };
}
