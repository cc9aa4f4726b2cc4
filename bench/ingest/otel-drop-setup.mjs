// bench:ingest-tracing's "sdk" mode, loaded with --import: the SDK as the documented setup
// registers it (examples/tracing/otel-setup.mjs), but its exporter drops the batches, so the
// figure is what recording spans costs hookinbox, without the exporter's serialisation and HTTP.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";

let exported = 0;
const dropping = {
  export(spans, done) {
    exported += spans.length;
    done({ code: 0 });
  },
  shutdown: async () => undefined,
};
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropping)] }),
);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
process.once("exit", () => process.stderr.write(`spans recorded and dropped: ${exported}\n`));
