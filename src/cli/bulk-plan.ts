import type { BulkPlan } from "../operations/bulk-scope.ts";

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * A dry run's answer as one line: what the bulk action would do, per target.
 *
 * @example
 * ```ts
 * planText({ dryRun: true, events: 13, deliveries: 13, targets: [{ target: "app", deliveries: 10 }, { target: "billing", deliveries: 3 }] }, "replay");
 * // "dry run: would replay 13 events (13 deliveries: app 10, billing 3); nothing changed"
 * ```
 */
export function planText(plan: BulkPlan & { readonly unsafe?: readonly string[] }, verb: string) {
  const perTarget = plan.targets.map((t) => `${t.target} ${t.deliveries}`).join(", ");
  const unsafe =
    plan.unsafe && plan.unsafe.length > 0
      ? `; runbook says NOT safe to reprocess: ${plan.unsafe.join(", ")} (needs --override-unsafe)`
      : "";
  return `dry run: would ${verb} ${plural(plan.events, "event", "events")} (${plural(plan.deliveries, "delivery", "deliveries")}${perTarget ? `: ${perTarget}` : ""})${unsafe}; nothing changed`;
}

/**
 * Tells a dry run's answer from a real one.
 *
 * @example
 * ```ts
 * if (isPlan(result)) return planText(result, "retry");
 * ```
 */
export function isPlan(result: object): result is BulkPlan {
  return "dryRun" in result && result.dryRun === true;
}
