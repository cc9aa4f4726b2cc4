// A small OTLP/HTTP trace receiver on loopback: it accepts JSON export requests on /v1/traces,
// answers as a collector does, and keeps every span it was sent, flattened.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One OTLP attribute value as JSON carries it. */
type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
};

/** A span as exported, with its attributes as a plain object and its scope's name. */
export interface ExportedSpan {
  readonly scope: string;
  readonly name: string;
  readonly kind: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly attributes: Record<string, string | number | boolean>;
  readonly links: ReadonlyArray<{ traceId: string; spanId: string }>;
  /** Which export request brought it (1, 2, …). */
  readonly request: number;
}

interface ExportRequest {
  resourceSpans?: Array<{
    scopeSpans?: Array<{
      scope?: { name?: string };
      spans?: Array<{
        name: string;
        kind: number;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        attributes?: Array<{ key: string; value: AnyValue }>;
        links?: Array<{ traceId: string; spanId: string }>;
      }>;
    }>;
  }>;
}

function plain(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return JSON.stringify(value);
}

/** Starts the receiver; `bodies` keeps each export request's raw JSON text too. */
export async function startOtlpReceiver() {
  const spans: ExportedSpan[] = [];
  const bodies: string[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      const text = Buffer.concat(chunks).toString("utf8");
      bodies.push(text);
      contentTypes.push(req.headers["content-type"] ?? "");
      const request = bodies.length;
      const parsed = JSON.parse(text) as ExportRequest;
      for (const resource of parsed.resourceSpans ?? []) {
        for (const scoped of resource.scopeSpans ?? []) {
          for (const span of scoped.spans ?? []) {
            spans.push({
              scope: scoped.scope?.name ?? "",
              name: span.name,
              kind: span.kind,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              attributes: Object.fromEntries(
                (span.attributes ?? []).map((a) => [a.key, plain(a.value)]),
              ),
              links: (span.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
              request,
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    bodies,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
