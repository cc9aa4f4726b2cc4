import type pg from "pg";
import { hookinboxError } from "../../errors.ts";
import { ulid } from "../../ids.ts";
import { decideEffectClaim, effectColumns, toEffectView } from "../core/effect-claim.ts";
import { effectHeldAlert } from "../core/effects.ts";
import type { EffectClaim, EffectClaimInput, EffectView } from "../queue-types.ts";
import { recordAlertsIn } from "./alert-outbox.ts";
import { withRetry, withTransaction } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * The effect ledger on PostgreSQL, with the same rules as SQLite's (see
 * src/store/sqlite/effects.ts): the UNIQUE (event_id, target, name) constraint decides
 * the first claim, and a stale claim is taken over (`reclaim`) or held (`hold`) under a row lock.
 *
 * @example
 * ```ts
 * const ledger = effectsPostgres(pool, schemaNames("hookinbox"));
 * const claim = await ledger.claim(input);
 * ```
 */
export function effectsPostgres(pool: pg.Pool, t: SchemaNames) {
  const byId = async (id: string) =>
    (
      await withRetry(() =>
        pool.query(`SELECT ${effectColumns} FROM ${t.effects} WHERE id = $1`, [id]),
      )
    ).rows[0];
  return {
    async claim(input: EffectClaimInput): Promise<EffectClaim> {
      const now = Math.floor(input.now);
      const inserted = await withRetry(() =>
        pool.query(
          `INSERT INTO ${t.effects} (id, event_id, target, name, status, on_stale, stale_after_ms, claimant, claimed_at, claims)
           VALUES ($1, $2, $3, $4, 'processing', $5, $6, $7, $8, 1)
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
        ),
      );
      if (inserted.rows[0])
        return { state: "claimed", effectId: inserted.rows[0].id, reclaimed: false };
      return withTransaction(pool, async (client) => {
        const { rows } = await client.query(
          `SELECT e.id, e.status, e.claimant, e.claimed_at, e.result, a.outcome AS claimant_outcome
         FROM ${t.effects} e LEFT JOIN ${t.attempts} a ON a.id = e.claimant
         WHERE e.event_id = $1 AND e.target = $2 AND e.name = $3 FOR UPDATE OF e`,
          [input.eventId, input.target, input.name],
        );
        const row = rows[0];
        if (!row) throw new Error("effect claim: conflicting row not found");
        const { claim, write } = decideEffectClaim(row, input, now);
        if (write === "reclaim") {
          await client.query(
            `UPDATE ${t.effects} SET claimant = $2, claimed_at = $3, claims = claims + 1, on_stale = $4, stale_after_ms = $5
           WHERE id = $1`,
            [row.id, input.claimant, now, input.onStale, input.staleAfterMs],
          );
        } else if (write === "hold") {
          await client.query(
            `UPDATE ${t.effects} SET status = 'held', held_at = $2 WHERE id = $1`,
            [row.id, now],
          );
        }
        // Whether this claim raises the held-effect alert is decided in core; recorded here, in
        // the transaction that held the effect.
        const alert = effectHeldAlert(claim, input);
        if (alert) await recordAlertsIn(client, t, alert.occurrences, alert.at);
        return claim;
      });
    },
    async resolve(
      effectId: string,
      resolution: "done" | "release",
      now: number,
      result?: unknown,
    ): Promise<EffectView | null> {
      const row = await byId(effectId);
      if (!row) return null;
      if (row.status !== "held")
        throw hookinboxError("HOOKINBOX_EFFECT_NOT_HELD", `effect is ${row.status}`);
      if (resolution === "done") {
        await withRetry(() =>
          pool.query(
            `UPDATE ${t.effects} SET status = 'done', claimant = NULL, result = $2::jsonb, completed_at = $3 WHERE id = $1 AND status = 'held'`,
            [effectId, result === undefined ? null : JSON.stringify(result), Math.floor(now)],
          ),
        );
        return toEffectView(await byId(effectId));
      }
      await withRetry(() =>
        pool.query(`DELETE FROM ${t.effects} WHERE id = $1 AND status = 'held'`, [effectId]),
      );
      return { ...toEffectView(row), status: "processing", claims: 0, claimedAt: null };
    },
  };
}
