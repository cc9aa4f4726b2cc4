import { type HandlerErrorCode, HookinboxError } from "../errors.ts";

/**
 * Thrown by a handler to say "retrying will not help": the delivery is dead-lettered at once
 * instead of being retried.
 *
 * @example
 * ```ts
 * if (!order) throw new PermanentError(`order ${id} does not exist`);
 * ```
 */
export class PermanentError extends HookinboxError {
  declare readonly code: HandlerErrorCode;
  /** @param code for subclasses only: the registry code this permanent failure carries. */
  constructor(
    message: string,
    options?: { cause?: unknown },
    code: HandlerErrorCode = "HOOKINBOX_PERMANENT",
  ) {
    super(code, message, options);
    this.name = "PermanentError";
  }
}

/**
 * A state change the state machine forbids (expired → active). It dead-letters the delivery
 * instead of being applied silently.
 *
 * @example
 * ```ts
 * throw new IllegalTransitionError("expired", "active");
 * ```
 */
export class IllegalTransitionError extends PermanentError {
  readonly from: string;
  readonly to: string;
  constructor(from: string, to: string) {
    super(`illegal transition ${from} → ${to}`, undefined, "HOOKINBOX_ILLEGAL_TRANSITION");
    this.name = "IllegalTransitionError";
    this.from = from;
    this.to = to;
  }
}

/**
 * An effect whose earlier claim went stale under `onStale: "hold"`: it waits for a human
 * (`hookinbox stuck`, then resolve it) and its delivery is dead-lettered.
 *
 * @example
 * ```ts
 * if (error instanceof EffectHeldError) console.log(error.effectId);
 * ```
 */
export class EffectHeldError extends PermanentError {
  readonly effectId: string;
  constructor(name: string, effectId: string) {
    super(
      `effect "${name}" (${effectId}) is held for a human: an earlier claim went stale`,
      undefined,
      "HOOKINBOX_EFFECT_HELD",
    );
    this.name = "EffectHeldError";
    this.effectId = effectId;
  }
}

/**
 * Whether an error dead-letters at once.
 *
 * @example
 * ```ts
 * isPermanent(new IllegalTransitionError("a", "b")); // true
 * ```
 */
export function isPermanent(error: unknown): boolean {
  return error instanceof PermanentError;
}
