import { hookinboxError, isHookinboxError } from "../errors.ts";
import { createHandlerContext } from "../handlers/context.ts";
import { isPermanent } from "../handlers/errors.ts";
import { type ResolvedHandler, retryDelay } from "../handlers/routes.ts";
import type { Logger } from "../log.ts";
import type { AlertRecord } from "../store/alert-types.ts";
import type { ClaimedDelivery, CompleteInput, QueueStore } from "../store/queue-types.ts";
import { toHandlerEvent } from "./handler-event.ts";

/** How one attempt ended, for the worker's bookkeeping and tests. */
export type RunOutcome = "done" | "stale" | "retry" | "dead" | "lease-lost" | "abandoned";

/** What running one claimed delivery needs. */
export interface RunContext {
  readonly store: QueueStore;
  readonly handlers: ReadonlyMap<string, ResolvedHandler>;
  readonly workerId: string;
  readonly now: () => number;
  readonly random: () => number;
  readonly logger: Logger;
  readonly onEffectHeld: (info: {
    effectId: string;
    name: string;
    delivery: ClaimedDelivery;
  }) => void;
  /** The alert recorded with a held effect (see createHandlerContext). */
  readonly heldAlert?: (name: string, delivery: ClaimedDelivery) => AlertRecord | undefined;
  /**
   * The handler returned and only recording "done" is left (no handler transaction): the worker
   * may give the slot to the next delivery while that completion commits.
   */
  readonly handlerReturned?: (delivery: ClaimedDelivery) => void;
}

/** An error's name and message, and the driver's code when it has one (`SQLITE_ERROR`, `42P01`). */
function errorInfo(error: unknown): { message: string; stack: string | null } {
  if (error instanceof Error) {
    // A driver's code (SQLITE_ERROR, 42P01) says what failed; hookinbox's own are in the name.
    const code = isHookinboxError(error) ? undefined : (error as { code?: unknown }).code;
    const suffix = typeof code === "string" && !error.message.includes(code) ? ` (${code})` : "";
    return { message: `${error.name}: ${error.message}${suffix}`, stack: error.stack ?? null };
  }
  return { message: String(error), stack: null };
}

/**
 * Runs one attempt of a claimed delivery and records how it ended: done (the handler returned,
 * or its `ctx.transaction` committed), stale (older than the version already applied for its
 * key), a retry with backoff, or a dead letter (PermanentError, the last attempt, or an attempt
 * budget spent by crashes). A lost lease records nothing: the new owner decides.
 *
 * @example
 * ```ts
 * const outcome = await runDelivery(context, claimed, abortController.signal);
 * ```
 */
export async function runDelivery(
  context: RunContext,
  delivery: ClaimedDelivery,
  signal: AbortSignal,
): Promise<RunOutcome> {
  const { store, now, logger } = context;
  const log = logger.child({
    deliveryId: delivery.id,
    eventId: delivery.eventId,
    target: delivery.target,
    source: delivery.source,
    type: delivery.type,
    attempt: delivery.budgetAttempt,
  });
  const input = (): CompleteInput => ({
    deliveryId: delivery.id,
    workerId: context.workerId,
    attempt: delivery.attempt,
    now: now(),
    orderingKey: delivery.orderingKey,
    eventId: delivery.eventId,
  });
  const handler = context.handlers.get(delivery.target);
  const fail = async (
    error: unknown,
    outcome: "error" | "permanent" | "exhausted",
    retryAt: number | null,
  ) => {
    const result = await store.failDelivery({
      ...input(),
      error: errorInfo(error),
      retryAt,
      outcome,
      blockKey: handler?.onDeadLetter !== "continue",
    });
    return result.dead ? "dead" : "retry";
  };
  try {
    if (!handler) {
      return await fail(
        new Error(`no handler is configured for target "${delivery.target}"`),
        "permanent",
        null,
      );
    }
    if (delivery.budgetAttempt > handler.retry.maxAttempts) {
      log.warn({ outcome: "exhausted" }, "delivery");
      return await fail(
        new Error(
          `attempt budget of ${handler.retry.maxAttempts} spent (crashed or stalled tries)`,
        ),
        "exhausted",
        null,
      );
    }
    if (
      handler.stale === "skip" &&
      delivery.version !== null &&
      delivery.appliedVersion !== null &&
      delivery.version < delivery.appliedVersion
    ) {
      await store.markStale(input());
      log.info(
        { outcome: "stale", version: delivery.version, appliedVersion: delivery.appliedVersion },
        "delivery",
      );
      return "stale";
    }
    const started = performance.now();
    // The handler's signal: aborted by the worker's (shutdown) or by the handler's timeout.
    const attempt = new AbortController();
    const onShutdown = () => attempt.abort(signal.reason);
    if (signal.aborted) onShutdown();
    else signal.addEventListener("abort", onShutdown, { once: true });
    const { ctx, state } = createHandlerContext({
      store,
      delivery,
      workerId: context.workerId,
      now,
      logger: log,
      signal: attempt.signal,
      onEffectHeld: context.onEffectHeld,
      ...(context.heldAlert ? { heldAlert: context.heldAlert } : {}),
    });
    try {
      const ran = await runWithTimeout(
        () => handler.handler(toHandlerEvent(delivery), ctx),
        attempt,
        handler.timeoutMs,
      );
      if (ran === "abandoned") {
        // The lease is left to expire (the heartbeat stops renewing it), so no second run of
        // this delivery starts while this one may still be going; the rescue then counts the
        // try (outcome lease-expired). The abandonment is recorded now, so `stuck` shows it.
        const graceMs = abandonGraceMs(handler.timeoutMs);
        await store
          .markAbandoned({
            ...input(),
            error: `abandoned: the handler ignored its timeout's abort signal for ${graceMs} ms after ${handler.timeoutMs} ms; its lease is left to expire`,
          })
          .catch((error: unknown) =>
            log.warn({ err: errorInfo(error).message }, "could not record the abandonment"),
          );
        log.error(
          { outcome: "abandoned", timeoutMs: handler.timeoutMs },
          "handler ignored its timeout's abort signal; abandoned, its lease left to expire",
        );
        return "abandoned";
      }
      if (!state.completed) {
        context.handlerReturned?.(delivery);
        await store.completeDelivery(input());
      }
      log.info({ outcome: "done", ms: Math.round(performance.now() - started) }, "delivery");
      return "done";
    } catch (error) {
      if (state.completed) {
        log.warn(
          { outcome: "done", err: errorInfo(error).message },
          "handler threw after its transaction committed; the delivery stays done",
        );
        return "done";
      }
      if (isHookinboxError(error, "HOOKINBOX_LEASE_LOST")) throw error;
      const permanent = isPermanent(error);
      const last = delivery.budgetAttempt >= handler.retry.maxAttempts;
      const retryAt =
        permanent || last
          ? null
          : now() + retryDelay(handler.retry, delivery.budgetAttempt, context.random);
      const outcome = await fail(error, permanent ? "permanent" : "error", retryAt);
      log[outcome === "dead" ? "error" : "warn"](
        { outcome, err: errorInfo(error).message, retryAt },
        "delivery",
      );
      return outcome;
    }
  } catch (error) {
    if (isHookinboxError(error, "HOOKINBOX_LEASE_LOST")) {
      log.warn({ outcome: "lease-lost" }, "delivery");
      return "lease-lost";
    }
    throw error;
  }
}

/** How long a handler may take to settle after its timeout aborted its signal. */
export function abandonGraceMs(timeoutMs: number): number {
  return Math.min(10_000, timeoutMs);
}

/**
 * Runs a handler with a timeout: at `timeoutMs` its signal aborts with
 * `HOOKINBOX_HANDLER_TIMEOUT` and the attempt fails with that error (whatever the handler threw
 * on abort). If it has not settled `abandonGraceMs` later, it is abandoned: "abandoned" is
 * returned and the promise is left to run out on its own.
 */
async function runWithTimeout(
  run: () => Promise<unknown> | unknown,
  attempt: AbortController,
  timeoutMs: number,
): Promise<"settled" | "abandoned"> {
  // Made when the timeout fires, not per attempt: an error's stack trace costs more than a no-op
  // handler (bench:postgres --profile).
  let timeoutError: Error | undefined;
  let grace: NodeJS.Timeout | undefined;
  let abandon: () => void = () => undefined;
  const abandoned = new Promise<"abandoned">((resolve) => {
    abandon = () => resolve("abandoned");
  });
  const timer = setTimeout(() => {
    timeoutError = hookinboxError("HOOKINBOX_HANDLER_TIMEOUT", `after ${timeoutMs} ms`);
    attempt.abort(timeoutError);
    grace = setTimeout(abandon, abandonGraceMs(timeoutMs));
    grace.unref?.();
  }, timeoutMs);
  // A handler still running when its caller gave up on it (a bounded `processAvailable`) must
  // not keep the process alive for its timeout: the worker's own claim loop keeps a worker up.
  timer.unref?.();
  try {
    const settled = Promise.resolve()
      .then(run)
      .then(
        // A handler that still finishes within the grace did its work: it is done.
        () => "settled" as const,
        (error: unknown) => {
          throw timeoutError !== undefined && attempt.signal.reason === timeoutError
            ? timeoutError
            : error;
        },
      );
    settled.catch(() => undefined);
    return await Promise.race([settled, abandoned]);
  } finally {
    clearTimeout(timer);
    clearTimeout(grace);
  }
}
