import { withEffectId } from "../alert-fold.ts";
import type { AlertOccurrence } from "../alert-types.ts";
import type { EffectClaim, EffectClaimInput } from "../queue-types.ts";
import { effectColumns } from "./effect-claim.ts";
import { renderWhere, type WhereTerm } from "./filters.ts";
import { placeholder, type SqlDialect, type SqlStatement } from "./sql-template.ts";

/** What `listEffects` filters on. */
export interface EffectQuery {
  readonly status?: "processing" | "done" | "held";
  readonly eventId?: string;
}

/** The most effects one listing returns. */
export const effectsListingLimit = 500;

/**
 * The one statement of the effects listing, for either store: the effects of `query` in id
 * order, at most `effectsListingLimit`, with the columns `toEffectView` reads. Drivers run it and
 * map each row with `toEffectView`.
 *
 * @example
 * ```ts
 * effectsListingSql("postgres", "hookinbox.effects", { status: "held" });
 * // { text: "SELECT … FROM hookinbox.effects WHERE status = $1 ORDER BY id LIMIT 500", params: ["held"] }
 * ```
 */
export function effectsListingSql(
  dialect: SqlDialect,
  table: string,
  query: EffectQuery,
): SqlStatement {
  const terms: WhereTerm[] = [];
  if (query.status !== undefined) terms.push({ sql: "status = ?", values: [query.status] });
  if (query.eventId !== undefined) terms.push({ sql: "event_id = ?", values: [query.eventId] });
  const { where, values } = renderWhere(terms, (n) => placeholder(dialect, n));
  return {
    text: `SELECT ${effectColumns} FROM ${table} ${where} ORDER BY id LIMIT ${effectsListingLimit}`,
    params: values,
  };
}

/**
 * The alert a claim records in its own transaction: the held-effect alert, with the effect's id,
 * when this very claim held the effect (`newlyHeld`: never for one found already held) and the
 * caller gave one; otherwise null. claimEffectProgram records what it returns.
 *
 * @example
 * ```ts
 * const alert = effectHeldAlert(claim, input);
 * if (alert) outbox.record(alert.occurrences, alert.at);
 * ```
 */
export function effectHeldAlert(
  claim: EffectClaim,
  input: Pick<EffectClaimInput, "heldAlert" | "now">,
): { occurrences: AlertOccurrence[]; at: { now: number; windowMs: number } } | null {
  if (claim.state !== "held" || !claim.newlyHeld || !input.heldAlert) return null;
  return {
    occurrences: withEffectId(input.heldAlert, claim.effectId),
    at: { now: Math.floor(input.now), windowMs: input.heldAlert.windowMs },
  };
}
