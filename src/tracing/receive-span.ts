import {
  type Attributes,
  context,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { formatTraceparent, parseTraceparent } from "./traceparent.ts";

/**
 * One event that a request stored (or found already stored).
 *
 * @example
 * ```ts
 * const event: ReceivedEvent = { eventId: "evt_…", type: "invoice.paid", duplicate: false, deliveries: 1 };
 * ```
 */
export interface ReceivedEvent {
  readonly eventId: string;
  readonly type: string | null;
  readonly duplicate: boolean;
  readonly deliveries: number;
}

/**
 * What ingest tells its `webhook.receive` span as it goes; every call is cheap when not recording.
 *
 * @example
 * ```ts
 * receive.phase("verified");
 * receive.outcome("rejected", "HOOKINBOX_SIGNATURE_MISMATCH");
 * ```
 */
export interface ReceiveTrace {
  /** The span's `traceparent`, stored with each new event so its deliveries join the trace. */
  readonly traceparent: string | null;
  /** A step passed: `verified`, `identified` (a span event at that time). */
  phase(name: "verified" | "identified"): void;
  /** How the request ended (`stored`, `duplicate`, `rejected`, …) and its code, if any. */
  outcome(outcome: string, code: string | undefined): void;
  /** The events the request stored (committed): a `stored` span event, then attributes for one, an `event` span event each for a batch. */
  stored(events: readonly ReceivedEvent[]): void;
  /** `trace_id` and `span_id` for the request's log line (none when not recording). */
  readonly logFields: { readonly trace_id?: string; readonly span_id?: string };
}

/**
 * What the span reads from the request: never its body or a header value but `traceparent`.
 *
 * @example
 * ```ts
 * const request: ReceiveRequest = { method: "POST", url: "/webhooks/stripe", bodySize: 812, traceparent: null };
 * ```
 */
export interface ReceiveRequest {
  readonly method: string;
  readonly url: string;
  readonly bodySize: number;
  /** The sender's own `traceparent`, linked (not parented: anyone may send one). */
  readonly traceparent: string | null | undefined;
}

const noTrace: ReceiveTrace = {
  traceparent: null,
  phase: () => undefined,
  outcome: () => undefined,
  stored: () => undefined,
  logFields: {},
};

function pathOf(url: string): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

function receiveTrace(span: Span): ReceiveTrace {
  const { traceId, spanId } = span.spanContext();
  return {
    traceparent: formatTraceparent(span.spanContext()),
    logFields: { trace_id: traceId, span_id: spanId },
    phase: (name) => {
      span.addEvent(name);
    },
    outcome: (outcome, code) => {
      span.setAttribute("hookinbox.outcome", outcome);
      if (code !== undefined) span.setAttribute("error.type", code);
    },
    stored: (events) => {
      span.addEvent("stored");
      span.setAttribute("hookinbox.event.count", events.length);
      const [only] = events;
      if (events.length === 1 && only) {
        span.setAttributes(eventAttributes(only));
        return;
      }
      for (const event of events) span.addEvent("event", eventAttributes(event));
    },
  };
}

function eventAttributes(event: ReceivedEvent): Attributes {
  return {
    "hookinbox.event.id": event.eventId,
    ...(event.type === null ? {} : { "hookinbox.event.type": event.type }),
    "hookinbox.duplicate": event.duplicate,
    "hookinbox.deliveries": event.deliveries,
  };
}

/**
 * Runs one ingest request as a `webhook.receive` span: kind SERVER (INTERNAL when a host's
 * own HTTP server span is already active, which becomes its parent), HTTP server attributes
 * (method, path without the query, body size, response status), `hookinbox.source`, and what
 * `run` reports through its {@link ReceiveTrace}. A sender's `traceparent` is a link, never the
 * parent: webhook endpoints are public, and a sender must not choose hookinbox's trace. A 5xx
 * answer marks the span as an error.
 *
 * @example
 * ```ts
 * const response = await traceReceive(tracer, "stripe", { method, url, bodySize, traceparent: null },
 *   (receive) => acceptRequest(context, "stripe", request, receive));
 * ```
 */
export async function traceReceive<R extends { readonly status: number }>(
  tracer: Tracer,
  source: string,
  request: ReceiveRequest,
  run: (receive: ReceiveTrace) => Promise<R>,
): Promise<R> {
  const parent = context.active();
  const sender = parseTraceparent(request.traceparent);
  const links: Link[] = sender ? [{ context: sender }] : [];
  const span = tracer.startSpan(
    "webhook.receive",
    {
      kind: trace.getSpan(parent) === undefined ? SpanKind.SERVER : SpanKind.INTERNAL,
      links,
      attributes: {
        "http.request.method": request.method.toUpperCase(),
        "url.path": pathOf(request.url),
        "http.request.body.size": request.bodySize,
        "hookinbox.source": source,
      },
    },
    parent,
  );
  if (!span.isRecording()) {
    span.end();
    // Sampled out: its context still travels with the event, so deliveries agree with it.
    const traceparent = formatTraceparent(span.spanContext());
    return run(traceparent === null ? noTrace : { ...noTrace, traceparent });
  }
  try {
    // Not made the active span: nothing below it starts spans, and entering a context would turn
    // on Node 20's AsyncLocalStorage promise hooks for every request. The request's log line
    // gets the ids from `logFields` instead.
    const response = await run(receiveTrace(span));
    span.setAttribute("http.response.status_code", response.status);
    if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    return response;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute("error.type", error instanceof Error ? error.name : "unknown");
    throw error;
  } finally {
    span.end();
  }
}
