// The OpenTelemetry SDK as a user registers it, exporting to memory: a tracer provider with a
// simple span processor and the AsyncLocalStorage context manager, registered globally for one
// test file and removed after it.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll } from "vitest";

/** Registers an in-memory SDK for this file; spans are cleared after each test. */
export function useInMemorySdk() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  beforeAll(() => {
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterEach(() => exporter.reset());
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });
  return {
    /** Finished spans of hookinbox's tracer (scope `hookinbox`), optionally of one name. */
    spans(name?: string): ReadableSpan[] {
      return exporter
        .getFinishedSpans()
        .filter((s) => s.instrumentationScope.name === "hookinbox")
        .filter((s) => name === undefined || s.name === name);
    },
    /** Every finished span, the application's own included. */
    all: (): ReadableSpan[] => exporter.getFinishedSpans(),
  };
}

/**
 * Every attribute value of `spans` as text: span attributes, span events' attributes and links'
 * attributes, so a test can look for a secret or a body among them.
 */
export function attributeTexts(spans: readonly ReadableSpan[]): string[] {
  const texts: string[] = [];
  const add = (attributes: Record<string, unknown> | undefined) => {
    for (const [key, value] of Object.entries(attributes ?? {}))
      texts.push(`${key}=${String(value)}`);
  };
  for (const span of spans) {
    add(span.attributes);
    for (const event of span.events) {
      texts.push(event.name);
      add(event.attributes);
    }
    for (const link of span.links) add(link.attributes);
    texts.push(span.name, span.status.message ?? "");
  }
  return texts;
}
