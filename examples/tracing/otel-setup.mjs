// OpenTelemetry for `hookinbox start`, loaded before hookinbox with Node's --import:
//
//   npm install @opentelemetry/sdk-trace-base @opentelemetry/context-async-hooks \
//     @opentelemetry/exporter-trace-otlp-http
//   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://collector:4318/v1/traces \
//     NODE_OPTIONS="--import ./otel-setup.mjs" npx hookinbox start
//
// with `tracing: { enabled: true }` in hookinbox's config (docs/operations.md#traces). The
// exporter sends OTLP/HTTP (JSON) to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else
// OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else http://localhost:4318/v1/traces.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";

const provider = new BasicTracerProvider({
  spanProcessors: [
    new BatchSpanProcessor(new OTLPTraceExporter(), {
      // Spans wait at most this long before they are sent (the SDK's default is 5 s).
      scheduledDelayMillis: Number(process.env.OTEL_BSP_SCHEDULE_DELAY ?? 5000),
    }),
  ],
});
trace.setGlobalTracerProvider(provider);
// Handlers' own spans join the delivery's trace through the async context.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

// hookinbox drains on SIGTERM and SIGINT and then exits: send what is left first.
process.once("beforeExit", () => {
  provider.shutdown().catch(() => undefined);
});
