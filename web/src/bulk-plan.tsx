// A bulk action's dry run as the dashboard shows it before asking for confirmation.

/** What `dryRun: true` answers (src/operations/bulk-scope.ts). */
export interface BulkPlan {
  readonly dryRun: true;
  readonly events: number;
  readonly deliveries: number;
  readonly targets: ReadonlyArray<{ readonly target: string; readonly deliveries: number }>;
  /** Types a runbook says are not safe to reprocess (retries only). */
  readonly unsafe?: readonly string[];
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * "This will retry 3 events (6 deliveries: app 3, billing 3)".
 *
 * @example
 * ```ts
 * planSentence(plan, "replay"); // "This will replay 13 events (13 deliveries: app 10, billing 3)"
 * ```
 */
export function planSentence(plan: BulkPlan, verb: string): string {
  const perTarget = plan.targets.map((t) => `${t.target} ${t.deliveries}`).join(", ");
  return `This will ${verb} ${count(plan.events, "event", "events")} (${count(plan.deliveries, "delivery", "deliveries")}${perTarget ? `: ${perTarget}` : ""})`;
}

/**
 * Sums the dry runs of several chunks of one selection.
 *
 * @example
 * ```ts
 * addPlans([first, second]);
 * ```
 */
export function addPlans(plans: readonly BulkPlan[]): BulkPlan {
  const perTarget = new Map<string, number>();
  for (const plan of plans)
    for (const t of plan.targets)
      perTarget.set(t.target, (perTarget.get(t.target) ?? 0) + t.deliveries);
  return {
    dryRun: true,
    events: plans.reduce((sum, p) => sum + p.events, 0),
    deliveries: plans.reduce((sum, p) => sum + p.deliveries, 0),
    targets: [...perTarget]
      .map(([target, deliveries]) => ({ target, deliveries }))
      .sort((a, b) => b.deliveries - a.deliveries || a.target.localeCompare(b.target)),
    unsafe: [...new Set(plans.flatMap((p) => p.unsafe ?? []))],
  };
}

/**
 * The confirmation of a bulk action: the dry run's counts, the types a runbook says are not safe
 * (then the button overrides), and Cancel.
 *
 * @example
 * ```tsx
 * <BulkConfirm plan={plan} verb="retry" onConfirm={(override) => run(override)} onCancel={close} />
 * ```
 */
export function BulkConfirm(props: {
  plan: BulkPlan;
  verb: string;
  onConfirm: (override: boolean) => void;
  onCancel: () => void;
}) {
  const unsafe = props.plan.unsafe ?? [];
  return (
    <div class="modal" role="dialog" aria-modal="true">
      <div class="card">
        <p data-testid="bulk-plan">{planSentence(props.plan, props.verb)}.</p>
        {unsafe.length > 0 && (
          <p class="bad" data-testid="bulk-unsafe">
            A runbook says not safe to reprocess: {unsafe.join(", ")}.
          </p>
        )}
        {props.plan.deliveries === 0 ? (
          <p class="muted">Nothing to do.</p>
        ) : unsafe.length > 0 ? (
          <button type="button" onClick={() => props.onConfirm(true)} data-testid="override-retry">
            Override and {props.verb}
          </button>
        ) : (
          <button type="button" onClick={() => props.onConfirm(false)} data-testid="confirm-bulk">
            Yes, {props.verb}
          </button>
        )}{" "}
        <button type="button" class="link" onClick={props.onCancel} data-testid="cancel-bulk">
          Cancel
        </button>
      </div>
    </div>
  );
}
