/**
 * What the alert hooks of the config receive (`alerts.onAlert`, `alerts.onEffectHeld`,
 * `alerts.onDestinationDisabled`). A leaf module: the config schema, its resolution and the
 * senders all read these, and it imports nothing back.
 */

/** What `alerts.onAlert` receives: the webhook message's `data`, with its `type`. */
export interface AlertNotice {
  /** `hookinbox.alert.<kind>`. */
  readonly type: string;
  /** The same on every call for one alert (dedupe on it: a crash before the mark calls again). */
  readonly alertId: string;
  readonly condition: string;
  /** `dead-letter`, `effect-held`, `destination-disabled`, `threshold-crossed`, `threshold-recovered`, `loop-detected`. */
  readonly kind: string;
  /** Occurrences folded into this call. */
  readonly count: number;
  readonly firstAt: string;
  readonly lastAt: string;
  /** The latest occurrence's details. */
  readonly details: unknown;
}

/** What `alerts.onDestinationDisabled` receives (the destination answered 410 Gone). */
export interface DestinationDisabledAlert {
  readonly destination: string;
  readonly reason: string;
  readonly deliveryId: string;
  readonly eventId: string;
}

/** What `alerts.onEffectHeld` receives. */
export interface EffectHeldAlert {
  readonly effectId: string;
  readonly name: string;
  readonly eventId: string;
  readonly deliveryId: string;
  readonly target: string;
  readonly source: string;
}
