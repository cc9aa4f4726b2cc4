import {
  context,
  type Link,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { ClaimedDelivery } from "../store/queue-types.ts";
import { parseTraceparent } from "./traceparent.ts";

/** Attempt outcomes that are not a success: the span's status is ERROR. */
const failedOutcomes = new Set(["retry", "dead", "lease-lost", "abandoned"]);

/**
 * Runs one attempt of a claimed delivery (its handler or its forward) under a `delivery.attempt`
 * span, kind CONSUMER, and returns what `run` returns. The span's parent is the
 * `webhook.receive` span that stored the event (its traceparent travels in the store, so the
 * worker may be another process); a replay instead starts a trace of its own with a link to it.
 * While `run` runs the span is active: handlers read it as `ctx.traceparent`, forwards send it
 * as `traceparent`, and logs carry its ids. Attributes: source, type, target, kind (`handler` or
 * `forward`), event and delivery ids, attempt number, replay, claim wait (ms from due to claim)
 * and outcome; never the body.
 * With no tracer, `run` runs untouched.
 *
 * @example
 * ```ts
 * const outcome = await traceAttempt(tracer, claimed, { claimedAt: Date.now(), kind: "handler" },
 *   () => runDelivery(ctx, claimed, signal));
 * ```
 */
export function traceAttempt<O extends string>(
  tracer: Tracer | undefined,
  delivery: ClaimedDelivery,
  attempt: { readonly claimedAt: number; readonly kind: "handler" | "forward" },
  run: () => Promise<O>,
): Promise<O> {
  // Untraced: `run`'s own promise, with no async wrapper around it on every attempt.
  return tracer ? tracedAttempt(tracer, delivery, attempt, run) : run();
}

async function tracedAttempt<O extends string>(
  tracer: Tracer,
  delivery: ClaimedDelivery,
  attempt: { readonly claimedAt: number; readonly kind: "handler" | "forward" },
  run: () => Promise<O>,
): Promise<O> {
  const stored = parseTraceparent(delivery.traceparent);
  const replay = delivery.isReplay;
  const parent = stored && !replay ? trace.setSpanContext(ROOT_CONTEXT, stored) : ROOT_CONTEXT;
  const links: Link[] = stored && replay ? [{ context: stored }] : [];
  const span = tracer.startSpan("delivery.attempt", { kind: SpanKind.CONSUMER, links }, parent);
  if (span.isRecording()) {
    span.setAttributes({
      "hookinbox.source": delivery.source,
      "hookinbox.target": delivery.target,
      "hookinbox.delivery.kind": attempt.kind,
      "hookinbox.event.id": delivery.eventId,
      "hookinbox.delivery.id": delivery.id,
      "hookinbox.attempt": delivery.budgetAttempt,
      "hookinbox.replay": replay,
      ...(delivery.type === null ? {} : { "hookinbox.event.type": delivery.type }),
      ...(delivery.runAt === undefined
        ? {}
        : { "hookinbox.claim_wait_ms": Math.max(0, attempt.claimedAt - delivery.runAt) }),
    });
  }
  try {
    const outcome = await context.with(trace.setSpan(parent, span), run);
    if (span.isRecording()) {
      span.setAttribute("hookinbox.outcome", outcome);
      if (failedOutcomes.has(outcome)) {
        span.setAttribute("error.type", outcome);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    return outcome;
  } catch (error) {
    // Bookkeeping failed (the store): the name of the error, never its message.
    span.setAttribute("error.type", error instanceof Error ? error.name : "unknown");
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}
