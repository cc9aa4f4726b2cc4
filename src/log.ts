import { type Logger, pino } from "pino";
import { traceLogFields } from "./tracing/log-fields.ts";

export type { Logger };

/**
 * The hookinbox logger: pino, JSON lines. Request bodies, secrets and signatures are never
 * passed to it; the redaction list is a second line of defence for fields that must not leak. A
 * line written while a span is active carries its `trace_id` and `span_id`.
 *
 * @example
 * ```ts
 * const log = createLogger({ level: "info" });
 * log.info({ source: "stripe", eventId, outcome: "stored" }, "webhook");
 * ```
 */
export function createLogger(
  options: { level?: string; destination?: NodeJS.WritableStream } = {},
): Logger {
  const config = {
    level: options.level ?? "info",
    base: undefined,
    // `trace_id` and `span_id` on every line written under an active span (docs/operations.md#traces).
    mixin: traceLogFields,
    redact: {
      paths: ["secret", "secrets", "signature", "body", "headers", "token"],
      censor: "[redacted]",
    },
  };
  if (options.destination) return pino(config, options.destination);
  // Asynchronous stdout writes keep logging off the request's critical path.
  return pino(config, pino.destination({ dest: 1, sync: false }));
}

/** A logger that drops everything (library default when none is given). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
