import { parseDuration } from "../config/units.ts";
import { hookinboxError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { AlertRecord } from "../store/alert-types.ts";
import type { ClaimedDelivery, CompleteInput, QueueStore } from "../store/queue-types.ts";
import { activeTraceparent } from "../tracing/traceparent.ts";
import { EffectHeldError } from "./errors.ts";
import { idempotencyKey } from "./idempotency-key.ts";
import { whileOpen } from "./open-transactions.ts";
import type { HandlerContext } from "./types.ts";

const defaultStaleAfterMs = 5 * 60_000;

const heldAlertOf = (record: AlertRecord | undefined) => (record ? { heldAlert: record } : {});

/** What the worker learns from a context after the handler returned. */
export interface ContextState {
  /** The handler's `ctx.transaction` committed, completing the delivery. */
  completed: boolean;
}

/**
 * Builds `ctx` for one attempt of one delivery.
 *
 * @example
 * ```ts
 * const { ctx, state } = createHandlerContext({ store, delivery, workerId, now, logger, signal, onEffectHeld });
 * await handler(event, ctx);
 * if (!state.completed) await store.completeDelivery(input);
 * ```
 */
export function createHandlerContext(options: {
  store: QueueStore;
  delivery: ClaimedDelivery;
  workerId: string;
  now: () => number;
  logger: Logger;
  signal: AbortSignal;
  onEffectHeld: (info: { effectId: string; name: string; delivery: ClaimedDelivery }) => void;
  /** The alert the store records in the transaction that holds effect `name` (none: no sink). */
  heldAlert?: (name: string, delivery: ClaimedDelivery) => AlertRecord | undefined;
}): { ctx: HandlerContext; state: ContextState } {
  const { store, delivery, workerId, now } = options;
  const state: ContextState = { completed: false };
  let transactionUsed = false;
  const completeInput = (): CompleteInput => ({
    deliveryId: delivery.id,
    workerId,
    attempt: delivery.attempt,
    now: now(),
    orderingKey: delivery.orderingKey,
    eventId: delivery.eventId,
  });
  const ctx: HandlerContext = {
    signal: options.signal,
    logger: options.logger,
    traceparent: activeTraceparent(),
    idempotencyKey: (name) => idempotencyKey(delivery.source, delivery.dedupKey, name),
    async transaction(work) {
      if (transactionUsed) throw hookinboxError("HOOKINBOX_TRANSACTION_REUSED");
      transactionUsed = true;
      const result = await store.completeDelivery(completeInput(), (tx) => whileOpen(tx, work));
      state.completed = true;
      return result as Awaited<ReturnType<typeof work>>;
    },
    async effect(name, fn, effectOptions = {}) {
      const staleAfterMs =
        effectOptions.staleAfter === undefined
          ? defaultStaleAfterMs
          : parseDuration(effectOptions.staleAfter);
      if (staleAfterMs === undefined)
        throw new TypeError(`ctx.effect("${name}"): staleAfter is not a duration`);
      const claim = await store.claimEffect({
        eventId: delivery.eventId,
        target: delivery.target,
        name,
        claimant: delivery.attemptId,
        onStale: effectOptions.onStale ?? "hold",
        staleAfterMs,
        now: now(),
        ...heldAlertOf(options.heldAlert?.(name, delivery)),
      });
      switch (claim.state) {
        case "done":
          return claim.result as Awaited<ReturnType<typeof fn>>;
        case "held":
          if (claim.newlyHeld) options.onEffectHeld({ effectId: claim.effectId, name, delivery });
          throw new EffectHeldError(name, claim.effectId);
        case "busy":
          throw hookinboxError("HOOKINBOX_EFFECT_BUSY", `effect "${name}"`);
        case "claimed": {
          let result: Awaited<ReturnType<typeof fn>>;
          try {
            result = await fn();
          } catch (error) {
            // It did not happen (or we cannot know it did): let the next try run it again.
            await store.releaseEffect(claim.effectId, delivery.attemptId);
            throw error;
          }
          await store.completeEffect(claim.effectId, delivery.attemptId, result, now());
          return result;
        }
      }
    },
  };
  return { ctx, state };
}
