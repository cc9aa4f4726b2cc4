import { IllegalTransitionError } from "./errors.ts";

/** The transitions a state machine allows: from each state, the states it may move to. */
export type Transitions<S extends string> = { readonly [From in S]?: readonly S[] };

/** A state machine made by `stateMachine`. */
export interface StateMachine<S extends string> {
  readonly initial: S;
  /** Whether `from → to` is allowed (staying in the same state always is). */
  can(from: S, to: S): boolean;
  /**
   * Returns `to` when `current → to` is allowed (a missing `current` starts from `initial`), or
   * throws `IllegalTransitionError`, which dead-letters the delivery.
   */
  next(current: S | null | undefined, to: S): S;
}

/**
 * A state machine for a resource's status, so that an out-of-order or bogus event cannot move it
 * somewhere it must never go. Re-applying the current state is allowed (webhooks repeat).
 *
 * @example
 * ```ts
 * const subscription = stateMachine({
 *   initial: "incomplete",
 *   transitions: { incomplete: ["active", "expired"], active: ["past_due", "canceled"], past_due: ["active", "canceled"] },
 * });
 * subscription.next("expired", "active"); // throws IllegalTransitionError
 * ```
 */
export function stateMachine<S extends string>(definition: {
  initial: S;
  transitions: Transitions<S>;
}): StateMachine<S> {
  const allowed = new Map<S, ReadonlySet<S>>();
  for (const [from, tos] of Object.entries(definition.transitions) as Array<[S, readonly S[]]>) {
    allowed.set(from, new Set(tos));
  }
  const can = (from: S, to: S) => from === to || (allowed.get(from)?.has(to) ?? false);
  return {
    initial: definition.initial,
    can,
    next(current, to) {
      const from = current ?? definition.initial;
      if (!can(from, to)) throw new IllegalTransitionError(from, to);
      return to;
    },
  };
}
