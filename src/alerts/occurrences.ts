import type { ResolvedAlerts } from "../config/resolve.ts";
import type { AlertOccurrence, AlertRecord } from "../store/alert-types.ts";
import type { DeadLetterAlert } from "../store/queue-types.ts";
import type { DestinationDisabledAlert, EffectHeldAlert } from "./types.ts";

/**
 * The outbox occurrence of a dead letter: its condition is the source and target, so a burst of
 * dead letters of one handler or destination folds into one alert per window. A forward refused
 * with 508 (HOOKINBOX_LOOP_DETECTED) is a forwarding loop: kind `loop-detected`, condition
 * `loop-detected:<source>:<destination>`, one alert per loop and window however many events ran
 * into it (each looping event ends in exactly one such dead letter).
 *
 * @example
 * ```ts
 * deadLetterOccurrence(alert).condition; // "dead-letter:stripe:app"
 * ```
 */
export function deadLetterOccurrence(alert: DeadLetterAlert): AlertOccurrence {
  const kind = alert.lastError?.startsWith("HOOKINBOX_LOOP_DETECTED")
    ? "loop-detected"
    : "dead-letter";
  return {
    condition: `${kind}:${alert.source}:${alert.target}`,
    kind,
    payload: { ...alert },
    deadLetterId: alert.deliveryId,
  };
}

/**
 * The outbox occurrence of an effect held for a human (condition: its target and effect name).
 *
 * @example
 * ```ts
 * effectHeldOccurrence(alert).condition; // "effect-held:app:charge"
 * ```
 */
export function effectHeldOccurrence(alert: EffectHeldAlert): AlertOccurrence {
  return {
    condition: `effect-held:${alert.target}:${alert.name}`,
    kind: "effect-held",
    payload: { ...alert },
  };
}

/**
 * The outbox occurrence of a destination disabled by a 410 Gone (condition: the destination).
 *
 * @example
 * ```ts
 * destinationDisabledOccurrence(alert).condition; // "destination-disabled:app"
 * ```
 */
export function destinationDisabledOccurrence(alert: DestinationDisabledAlert): AlertOccurrence {
  return {
    condition: `destination-disabled:${alert.destination}`,
    kind: "destination-disabled",
    payload: { ...alert },
  };
}

/**
 * Where outbox rows go, by condition prefix: `""` for `alerts.webhook`, `"function:"` for
 * `alerts.onAlert`. Each sink has its own rows (its own folding, retries and threshold state), so
 * one failing never repeats or holds back the other.
 */
export const sinkPrefixes = { webhook: "", function: "function:" } as const;

/**
 * The condition prefixes of the configured sinks (none: no outbox rows are written).
 *
 * @example
 * ```ts
 * alertSinks(config.alerts); // ["", "function:"] with both a webhook and onAlert
 * ```
 */
export function alertSinks(alerts: ResolvedAlerts | undefined): string[] {
  const sinks: string[] = [];
  if (alerts?.webhook) sinks.push(sinkPrefixes.webhook);
  if (alerts?.onAlert) sinks.push(sinkPrefixes.function);
  return sinks;
}

/**
 * The occurrences once per configured sink, each sink's under its own condition prefix.
 *
 * @example
 * ```ts
 * forSinks(config.alerts, [effectHeldOccurrence(alert)]).length; // 2 with a webhook and onAlert
 * ```
 */
export function forSinks(
  alerts: ResolvedAlerts | undefined,
  occurrences: readonly AlertOccurrence[],
): AlertOccurrence[] {
  return alertSinks(alerts).flatMap((prefix) =>
    occurrences.map((occurrence) => ({ ...occurrence, condition: prefix + occurrence.condition })),
  );
}

/**
 * What a state change records in its own transaction (`heldAlert`, `setDestinationState`'s
 * alert): the occurrences per sink, or undefined when no sink is configured.
 *
 * @example
 * ```ts
 * await store.setDestinationState(name, "disabled", reason, now, alertRecord(config.alerts, [occurrence]));
 * ```
 */
export function alertRecord(
  alerts: ResolvedAlerts | undefined,
  occurrences: readonly AlertOccurrence[],
): AlertRecord | undefined {
  const expanded = forSinks(alerts, occurrences);
  if (!alerts || expanded.length === 0) return undefined;
  return { occurrences: expanded, windowMs: alerts.windowMs };
}
