import type { EffectClaim, EffectClaimInput, EffectView } from "../queue-types.ts";

/** The effect row a claim found in place (its insert lost to the unique constraint). */
export interface ExistingEffect {
  readonly id: string;
  readonly status: "processing" | "done" | "held";
  readonly claimant: string | null;
  readonly claimed_at: number | null;
  /** The stored result, already decoded from the driver's JSON. */
  readonly result: unknown;
  /** The outcome of the attempt that holds the claim (`running` while it runs), if any. */
  readonly claimant_outcome: string | null;
}

/**
 * What a claim decides about an effect row that already exists, as a pure function of the row,
 * the input and the time: `claim` is the answer; `write` is the change the claim makes in the
 * same transaction (`reclaim`: take the claim over; `hold`: park it for a human; `none`; see
 * claimEffectProgram in effect-writes.ts). A claim is stale when it is older than `staleAfterMs` AND the attempt that
 * made it is no longer running.
 *
 * @example
 * ```ts
 * const { claim, write } = decideEffectClaim(row, input, Date.now());
 * if (write === "hold") holdEffect(row.id);
 * ```
 */
export function decideEffectClaim(
  row: ExistingEffect,
  input: Pick<EffectClaimInput, "claimant" | "onStale" | "staleAfterMs">,
  now: number,
): { claim: EffectClaim; write: "none" | "reclaim" | "hold" } {
  if (row.status === "done") {
    return {
      claim: { state: "done", effectId: row.id, result: row.result ?? undefined },
      write: "none",
    };
  }
  if (row.status === "held") {
    return { claim: { state: "held", effectId: row.id, newlyHeld: false }, write: "none" };
  }
  if (row.claimant === input.claimant) {
    return { claim: { state: "claimed", effectId: row.id, reclaimed: false }, write: "none" };
  }
  const claimedAt = row.claimed_at ?? 0;
  const stale = now - claimedAt > input.staleAfterMs && row.claimant_outcome !== "running";
  if (!stale) return { claim: { state: "busy", effectId: row.id, claimedAt }, write: "none" };
  if (input.onStale === "reclaim") {
    return { claim: { state: "claimed", effectId: row.id, reclaimed: true }, write: "reclaim" };
  }
  return { claim: { state: "held", effectId: row.id, newlyHeld: true }, write: "hold" };
}

/** An effects row as both drivers select it for views. */
export interface EffectRow {
  id: string;
  event_id: string;
  target: string;
  name: string;
  status: "processing" | "done" | "held";
  on_stale: "reclaim" | "hold";
  stale_after_ms: number;
  claims: number;
  claimed_at: number | null;
  completed_at: number | null;
}

/** The effects columns `toEffectView` reads. */
export const effectColumns =
  "id, event_id, target, name, status, on_stale, stale_after_ms, claims, claimed_at, completed_at";

/**
 * Maps an effects row to its API view.
 *
 * @example
 * ```ts
 * const views = rows.map(toEffectView);
 * ```
 */
export function toEffectView(row: EffectRow): EffectView {
  return {
    id: row.id,
    eventId: row.event_id,
    target: row.target,
    name: row.name,
    status: row.status,
    onStale: row.on_stale,
    staleAfterMs: row.stale_after_ms,
    claims: row.claims,
    claimedAt: row.claimed_at === null ? null : new Date(row.claimed_at).toISOString(),
    completedAt: row.completed_at === null ? null : new Date(row.completed_at).toISOString(),
  };
}
