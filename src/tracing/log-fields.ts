import { context, isSpanContextValid, trace } from "@opentelemetry/api";

/**
 * `trace_id` and `span_id` of the span active now, for every log line written under it (the
 * logger's pino mixin); nothing when no valid span is active.
 *
 * @example
 * ```ts
 * pino({ mixin: traceLogFields });
 * // {"level":30,"trace_id":"4bf9…4736","span_id":"00f0…02b7","msg":"delivery"}
 * ```
 */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
