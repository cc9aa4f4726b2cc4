import { type Tracer, trace } from "@opentelemetry/api";
import { packageVersion } from "../package-version.ts";

/**
 * The instrumentation scope name of every hookinbox span.
 *
 * @example
 * ```ts
 * exporter.getFinishedSpans().filter((s) => s.instrumentationScope.name === tracerName);
 * ```
 */
export const tracerName = "hookinbox";

/**
 * hookinbox's tracer from the global provider (`trace.getTracer("hookinbox", version)`). With no
 * SDK registered it is the API's no-op tracer. Callers hold it only when `tracing.enabled` is
 * set; with tracing off no tracer exists and no span is started.
 *
 * @example
 * ```ts
 * const tracer = config.tracing.enabled ? hookinboxTracer() : undefined;
 * ```
 */
export function hookinboxTracer(): Tracer {
  return trace.getTracer(tracerName, packageVersion());
}
