import { hookinboxError } from "../errors.ts";
import { parseDuration } from "./units.ts";

/** Retention after defaults, in milliseconds (null: kept forever). */
export interface ResolvedRetention {
  readonly payloadsMs: number | null;
  readonly eventsMs: number | null;
  readonly receiptsMs: number | null;
  readonly rejectedMs: number;
  readonly dedupMs: number;
  /** Whether processes sweep on their own, hourly (`retention.sweep`, default true). */
  readonly sweep: boolean;
}

/** The default dedup window: over ten times the longest documented provider retry window (3 d). */
export const defaultDedupWindow = "35d";

type Duration = string | number | undefined;

const ms = (value: Duration): number | null =>
  value === undefined ? null : (parseDuration(value) ?? null);

const invalid = (key: string, message: string) =>
  hookinboxError("HOOKINBOX_CONFIG_INVALID", `\n  - ${key}: ${message}`);

/**
 * Resolves `retention` (and the older `http.rejectedRetention`, kept as an alias of
 * `retention.rejected`; setting both to different values is an error). `events` shorter than
 * `dedup` is refused: a retry of an expired event would run its handlers again inside the window
 * the dedup guarantee promises.
 *
 * @example
 * ```ts
 * resolveRetention({ events: "365d" }, undefined).dedupMs; // 35 days
 * ```
 */
export function resolveRetention(
  retention:
    | {
        payloads?: Duration;
        events?: Duration;
        receipts?: Duration;
        rejected?: Duration;
        dedup?: Duration;
        sweep?: boolean;
      }
    | undefined,
  httpRejectedRetention: Duration,
): ResolvedRetention {
  const rejected = ms(retention?.rejected);
  const legacy = ms(httpRejectedRetention);
  if (rejected !== null && legacy !== null && rejected !== legacy) {
    throw invalid(
      "retention.rejected",
      "differs from http.rejectedRetention (its older name); keep only retention.rejected",
    );
  }
  const dedupMs = ms(retention?.dedup ?? defaultDedupWindow) ?? 35 * 86_400_000;
  const eventsMs = ms(retention?.events);
  if (eventsMs !== null && eventsMs < dedupMs) {
    throw invalid(
      "retention.events",
      `must be at least retention.dedup (${String(retention?.dedup ?? defaultDedupWindow)}): an expired event's retry would run its handlers again`,
    );
  }
  return {
    payloadsMs: ms(retention?.payloads),
    eventsMs,
    receiptsMs: ms(retention?.receipts),
    rejectedMs: rejected ?? legacy ?? 7 * 86_400_000,
    dedupMs,
    sweep: retention?.sweep ?? true,
  };
}
