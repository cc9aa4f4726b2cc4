import type Database from "better-sqlite3";
import { hookinboxError } from "../../errors.ts";
import { ulid } from "../../ids.ts";
import {
  decideEffectClaim,
  type EffectRow,
  effectColumns,
  toEffectView,
} from "../core/effect-claim.ts";
import type { EffectClaim, EffectClaimInput, EffectView } from "../queue-types.ts";

// The UNIQUE (event_id, target, name) constraint decides who claims first.
const insertSql = `
  INSERT INTO effects (id, event_id, target, name, status, on_stale, stale_after_ms, claimant, claimed_at, claims)
  VALUES (@id, @eventId, @target, @name, 'processing', @onStale, @staleAfterMs, @claimant, @now, 1)
  ON CONFLICT (event_id, target, name) DO NOTHING
  RETURNING id`;

const existingSql = `
  SELECT e.id, e.status, e.claimant, e.claimed_at, e.result, a.outcome AS claimant_outcome
  FROM effects e LEFT JOIN attempts a ON a.id = e.claimant
  WHERE e.event_id = @eventId AND e.target = @target AND e.name = @name`;

const reclaimSql = `
  UPDATE effects SET claimant = @claimant, claimed_at = @now, claims = claims + 1,
                     on_stale = @onStale, stale_after_ms = @staleAfterMs
  WHERE id = @id AND status = 'processing'`;

const holdSql =
  "UPDATE effects SET status = 'held', held_at = @now WHERE id = @id AND status = 'processing'";

interface ExistingRow {
  id: string;
  status: "processing" | "done" | "held";
  claimant: string | null;
  claimed_at: number | null;
  result: string | null;
  claimant_outcome: string | null;
}

/**
 * Prepares the effect ledger. A claim is `claimed` (run the effect), `done` (return the stored
 * result, do not run), `busy` (another attempt holds a fresh claim: retry later) or `held`.
 * A claim is stale when it is older than `staleAfterMs` AND the attempt that made it is no longer
 * running (its lease expired or it ended): then `reclaim` takes it over (a possible duplicate beats
 * a missing effect: emails) and `hold` parks it for a human (money and goods).
 *
 * @example
 * ```ts
 * const ledger = prepareEffects(db);
 * const claim = ledger.claim({ eventId, target, name: "email", claimant: attemptId, onStale: "hold", staleAfterMs: 300_000, now });
 * ```
 */
export function prepareEffects(db: Database.Database) {
  const insert = db.prepare<[Record<string, unknown>], { id: string }>(insertSql);
  const existing = db.prepare<[Record<string, unknown>], ExistingRow>(existingSql);
  const reclaim = db.prepare(reclaimSql);
  const hold = db.prepare(holdSql);
  const byId = db.prepare<[string], EffectRow>(`SELECT ${effectColumns} FROM effects WHERE id = ?`);
  const markDone = db.prepare(
    "UPDATE effects SET status = 'done', claimant = NULL, result = ?, completed_at = ? WHERE id = ? AND status = 'held'",
  );
  const drop = db.prepare("DELETE FROM effects WHERE id = ? AND status = 'held'");
  return {
    claim(input: EffectClaimInput): EffectClaim {
      const now = Math.floor(input.now);
      const params = { ...input, now };
      const inserted = insert.get({ ...params, id: `eff_${ulid(now)}` });
      if (inserted) return { state: "claimed", effectId: inserted.id, reclaimed: false };
      const row = existing.get({ eventId: input.eventId, target: input.target, name: input.name });
      if (!row) throw new Error("effect claim: conflicting row not found");
      const result = row.result === null ? undefined : JSON.parse(row.result);
      const { claim, write } = decideEffectClaim({ ...row, result }, input, now);
      if (write === "reclaim") reclaim.run({ ...params, id: row.id });
      if (write === "hold") hold.run({ id: row.id, now });
      return claim;
    },
    /** Resolves a held effect; null when there is none; throws when it is not held. */
    resolve(
      effectId: string,
      resolution: "done" | "release",
      now: number,
      result?: unknown,
    ): EffectView | null {
      const row = byId.get(effectId);
      if (!row) return null;
      if (row.status !== "held") {
        throw hookinboxError("HOOKINBOX_EFFECT_NOT_HELD", `effect is ${row.status}`);
      }
      if (resolution === "done") {
        markDone.run(
          result === undefined ? null : JSON.stringify(result),
          Math.floor(now),
          effectId,
        );
        return toEffectView(byId.get(effectId)!);
      }
      drop.run(effectId);
      // Released: the row is gone and the next try claims the effect afresh.
      return { ...toEffectView(row), status: "processing", claims: 0, claimedAt: null };
    },
  };
}
