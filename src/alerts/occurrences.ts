import type {
  DestinationDisabledAlert,
  EffectHeldAlert,
  ResolvedAlerts,
} from "../config/resolve.ts";
import type { Logger } from "../log.ts";
import type { AlertOccurrence } from "../store/alert-types.ts";
import type { DeadLetterAlert, QueueStore } from "../store/queue-types.ts";

/**
 * The outbox occurrence of a dead letter: its condition is the source and target, so a burst of
 * dead letters of one handler or destination folds into one alert per window.
 *
 * @example
 * ```ts
 * deadLetterOccurrence(alert).condition; // "dead-letter:stripe:app"
 * ```
 */
export function deadLetterOccurrence(alert: DeadLetterAlert): AlertOccurrence {
  return {
    condition: `dead-letter:${alert.source}:${alert.target}`,
    kind: "dead-letter",
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
 * Writes occurrences to the outbox when `alerts.webhook` is configured (nothing otherwise); a
 * store failure is logged, never thrown into the run that hit the condition.
 *
 * @example
 * ```ts
 * recordAlert(store, config.alerts, logger, [effectHeldOccurrence(alert)], Date.now());
 * ```
 */
export function recordAlert(
  store: Pick<QueueStore, "recordAlerts">,
  alerts: ResolvedAlerts | undefined,
  logger: Logger,
  occurrences: readonly AlertOccurrence[],
  now: number,
): void {
  if (!alerts?.webhook) return;
  store
    .recordAlerts(occurrences, { now, windowMs: alerts.windowMs })
    .catch((error: unknown) =>
      logger.error({ err: (error as Error).message }, "writing an alert to the outbox failed"),
    );
}
