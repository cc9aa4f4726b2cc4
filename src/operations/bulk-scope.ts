import { z } from "zod";
import { hookinboxError } from "../errors.ts";
import type { DeliveryCounts } from "../store/queue-types.ts";
import { unsafeTypes } from "./retry-deliveries.ts";
import type { Runbooks } from "./runbook-lookup.ts";

/**
 * The scope of a bulk action. An empty filter would mean "everything", so a typo or a forgotten
 * filter must not get there by accident: everything is asked for with `all: true` (CLI `--all`),
 * and `all: true` beside a filter is a contradiction, refused too.
 */

/** `all`: act on everything; required when no filter is given, refused beside one. */
export const allField = z
  .boolean({ error: "must be true or false" })
  .optional()
  .describe("act on everything: required when no filter is given, refused beside one");

/** `dryRun`: count what would be touched, per target, and change nothing. */
export const dryRunField = z
  .boolean({ error: "must be true or false" })
  .default(false)
  .describe("count the events and deliveries it would touch, per target, and change nothing");

/**
 * Refuses a bulk input with neither a filter nor `all: true` (HOOKINBOX_BULK_UNSCOPED), or with
 * both (HOOKINBOX_BULK_SCOPE_CONFLICT). `filters` are the input's filter fields, as the API
 * names them.
 *
 * @example
 * ```ts
 * checkBulkScope({ all: undefined, source: "stripe" }, ["source", "type"]); // passes
 * checkBulkScope({}, ["source", "type"]); // throws HOOKINBOX_BULK_UNSCOPED
 * ```
 */
export function checkBulkScope(
  input: { readonly all?: boolean | undefined } & Readonly<Record<string, unknown>>,
  filters: readonly string[],
): void {
  const given = filters.filter((key) => input[key] !== undefined);
  if (input.all === true && given.length > 0) {
    throw hookinboxError(
      "HOOKINBOX_BULK_SCOPE_CONFLICT",
      `"all": true was given with ${given.join(", ")}`,
    );
  }
  if (input.all !== true && given.length === 0) {
    throw hookinboxError("HOOKINBOX_BULK_UNSCOPED", `or filter by ${filters.join(", ")}`);
  }
}

/** What a dry run answers: what the bulk action would touch, per target; nothing is changed. */
export interface BulkPlan {
  readonly dryRun: true;
  readonly events: number;
  readonly deliveries: number;
  /** Deliveries per target, most first (then by name). */
  readonly targets: ReadonlyArray<{ readonly target: string; readonly deliveries: number }>;
}

/**
 * Sums per-target delivery counts into a dry run's answer.
 *
 * @example
 * ```ts
 * bulkPlan(13, [{ target: "app", deliveries: 10 }, { target: "billing", deliveries: 3 }]);
 * // { dryRun: true, events: 13, deliveries: 13, targets: [{ target: "app", … }, …] }
 * ```
 */
export function bulkPlan(
  events: number,
  counts: Iterable<{ readonly target: string; readonly deliveries: number }>,
): BulkPlan {
  const perTarget = new Map<string, number>();
  for (const { target, deliveries } of counts)
    perTarget.set(target, (perTarget.get(target) ?? 0) + deliveries);
  const targets = [...perTarget]
    .filter(([, deliveries]) => deliveries > 0)
    .map(([target, deliveries]) => ({ target, deliveries }))
    .sort((a, b) => b.deliveries - a.deliveries || a.target.localeCompare(b.target));
  const deliveries = targets.reduce((sum, t) => sum + t.deliveries, 0);
  return { dryRun: true, events, deliveries, targets };
}

/**
 * A bulk retry's dry run from the store's counts, with the event types whose runbook says they
 * are not safe to reprocess (the real run refuses them unless overridden).
 *
 * @example
 * ```ts
 * retryPlan(await ctx.store.countDeliveryKinds({ statuses: ["dead"] }), ctx.runbooks);
 * ```
 */
export function retryPlan(
  counts: DeliveryCounts,
  runbooks: Runbooks,
): BulkPlan & { readonly unsafe: string[] } {
  return { ...bulkPlan(counts.events, counts.kinds), unsafe: unsafeTypes(counts.kinds, runbooks) };
}
