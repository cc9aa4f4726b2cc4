import { type Context, context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { formatTraceparent } from "./traceparent.ts";
import { hookinboxTracer } from "./tracer.ts";

/**
 * What a forward's HTTP exchange reports back, as far as its span needs.
 *
 * @example
 * ```ts
 * const outcome: ClientOutcome = { status: 503, errorClass: null };
 * ```
 */
export interface ClientOutcome {
  readonly status: number | null;
  readonly errorClass: string | null;
}

/**
 * Runs one forwarded POST under an HTTP client span (`POST`, kind CLIENT) when a recording span
 * (the `delivery.attempt`) is active, and sends that span's `traceparent`; otherwise `send` runs
 * with the headers as they are. Attributes follow the HTTP client conventions but leave the URL's
 * path and query out (`server.address`, `server.port`, `url.scheme` only): a destination URL may
 * carry a token in either.
 *
 * @example
 * ```ts
 * const result = await traceClientPost(url, headers, (h) => agentPost(h));
 * ```
 */
export function traceClientPost<R extends ClientOutcome>(
  url: URL,
  headers: Record<string, string>,
  send: (headers: Record<string, string>) => Promise<R>,
): Promise<R> {
  const parent = context.active();
  // Untraced: `send`'s own promise, with no async wrapper around it on every request.
  return trace.getSpan(parent)?.isRecording() === true
    ? tracedPost(parent, url, headers, send)
    : send(headers);
}

async function tracedPost<R extends ClientOutcome>(
  parent: Context,
  url: URL,
  headers: Record<string, string>,
  send: (headers: Record<string, string>) => Promise<R>,
): Promise<R> {
  const scheme = url.protocol.replace(/:$/, "");
  const span = hookinboxTracer().startSpan(
    "POST",
    {
      kind: SpanKind.CLIENT,
      attributes: {
        "http.request.method": "POST",
        "server.address": url.hostname,
        "server.port": url.port === "" ? (scheme === "https" ? 443 : 80) : Number(url.port),
        "url.scheme": scheme,
      },
    },
    parent,
  );
  const traceparent = formatTraceparent(span.spanContext());
  try {
    const result = await send(traceparent === null ? headers : { ...headers, traceparent });
    if (result.status !== null) span.setAttribute("http.response.status_code", result.status);
    const failed =
      result.errorClass ??
      (result.status !== null && result.status >= 400 ? String(result.status) : null);
    if (failed !== null) {
      span.setAttribute("error.type", failed);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    return result;
  } finally {
    span.end();
  }
}
