import {
  type Context,
  context,
  isSpanContextValid,
  type SpanContext,
  TraceFlags,
  trace,
} from "@opentelemetry/api";

/** W3C Trace Context version 00: `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`. */
const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * A span context as a W3C `traceparent` value, or null when it is not valid (the no-op API's
 * empty context).
 *
 * @example
 * ```ts
 * formatTraceparent(span.spanContext()); // "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
 * ```
 */
export function formatTraceparent(spanContext: SpanContext): string | null {
  if (!isSpanContextValid(spanContext)) return null;
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, "0");
  return `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
}

/**
 * Reads a W3C `traceparent` value (version 00, lower-case hex, ids not all zero) as a remote span
 * context; anything else is null. Never throws.
 *
 * @example
 * ```ts
 * parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")?.traceId;
 * // "4bf92f3577b34da6a3ce929d0e0e4736"
 * ```
 */
export function parseTraceparent(value: string | null | undefined): SpanContext | null {
  if (typeof value !== "string") return null;
  const match = traceparentPattern.exec(value.trim());
  if (!match) return null;
  const spanContext: SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  return isSpanContextValid(spanContext) ? spanContext : null;
}

/**
 * The `traceparent` of the span active in `ctx` (default: the current context), or null when no
 * valid span is active. What hookinbox sends to destinations and gives handlers as
 * `ctx.traceparent`.
 *
 * @example
 * ```ts
 * const headers = { ...(activeTraceparent() ? { traceparent: activeTraceparent()! } : {}) };
 * ```
 */
export function activeTraceparent(ctx: Context = context.active()): string | null {
  const span = trace.getSpan(ctx);
  return span ? formatTraceparent(span.spanContext()) : null;
}
