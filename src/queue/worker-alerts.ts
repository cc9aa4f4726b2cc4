import { deliverDueAlerts } from "../alerts/deliver.ts";
import { alertRecord, alertSinks, effectHeldOccurrence } from "../alerts/occurrences.ts";
import { evaluateThresholds } from "../alerts/thresholds.ts";
import type { ResolvedAlerts } from "../config/resolve.ts";
import type { Logger } from "../log.ts";
import type { AlertRecord } from "../store/alert-types.ts";
import type { ClaimedDelivery, QueueStore } from "../store/queue-types.ts";
import { sweepDeadLetterAlerts } from "./dead-letter-alerts.ts";
import type { WorkerMetrics } from "./worker-metrics.ts";

/** What a worker's alerts need. */
export interface WorkerAlertsOptions {
  readonly store: QueueStore;
  readonly alerts?: ResolvedAlerts;
  readonly log: Logger;
  readonly now: () => number;
  readonly metrics?: WorkerMetrics;
  /** How often dead letters are swept without a nudge (half the default lease). */
  readonly sweepEveryMs: number;
  readonly pollIntervalMs: number;
}

/** A worker's alerting: dead-letter sweeps, the outbox and thresholds, held effects. */
export interface WorkerAlerts {
  /** Starts the timers and sweeps once. */
  start(): void;
  /** A delivery was dead-lettered: sweep now (or once more after the sweep under way). */
  deadLetter(): void;
  /** Logs, counts and calls `onEffectHeld`; the outbox row was committed with the hold. */
  effectHeld(held: { effectId: string; name: string; delivery: ClaimedDelivery }): void;
  /** The outbox rows the store records in the transaction that holds effect `name`. */
  heldAlert(name: string, delivery: ClaimedDelivery): AlertRecord | undefined;
  stop(): void;
  /** Resolves once no dead-letter sweep (and the alert pass after it) is under way. */
  settled(): Promise<void>;
}

/** What a held-effect alert says (the store fills in `effectId` when it records it). */
function heldDetails(effectId: string, name: string, delivery: ClaimedDelivery) {
  return {
    effectId,
    name,
    eventId: delivery.eventId,
    deliveryId: delivery.id,
    target: delivery.target,
    source: delivery.source,
  };
}

/**
 * A worker's alerts. Dead letters are swept at start, on each dead letter and every
 * `sweepEveryMs`; a dead letter during a sweep asks for one more, so none waits for the next
 * tick. With `alerts.webhook` or `alerts.onAlert`, thresholds and then the outbox run after each
 * sweep and every poll interval (at most 4 times a second), one pass at a time.
 *
 * @example
 * ```ts
 * const alerts = workerAlerts({ store, alerts: config.alerts, log, now, sweepEveryMs: 15_000, pollIntervalMs: 1000 });
 * alerts.start();
 * ```
 */
export function workerAlerts(options: WorkerAlertsOptions): WorkerAlerts {
  const { store, log, now } = options;
  let stopped = false;
  const timers: NodeJS.Timeout[] = [];

  const outbox = alertSinks(options.alerts).length > 0;
  const sending = { running: false };
  const sendAlerts = async () => {
    if (!options.alerts || !outbox || sending.running) return;
    sending.running = true;
    try {
      await evaluateThresholds(store, options.alerts, now());
      await deliverDueAlerts(store, options.alerts, log, now());
    } catch (error) {
      log.error({ err: (error as Error).message }, "alert outbox pass failed");
    } finally {
      sending.running = false;
    }
  };

  const sweeping = { running: false, again: false };
  let sweep: Promise<void> | null = null;
  const deadLetter = () => {
    if (sweeping.running) {
      sweeping.again = true;
      return;
    }
    sweeping.running = true;
    sweeping.again = false;
    sweep = sweepDeadLetterAlerts(store, options.alerts, log, now)
      .catch((error: unknown) =>
        log.error({ err: (error as Error).message }, "dead-letter alert sweep failed"),
      )
      .then(() => sendAlerts())
      .finally(() => {
        sweeping.running = false;
        sweep = null;
        if (sweeping.again && !stopped) deadLetter();
      });
  };

  const heldAlert: WorkerAlerts["heldAlert"] = (name, delivery) =>
    alertRecord(options.alerts, [effectHeldOccurrence(heldDetails("", name, delivery))]);

  const effectHeld: WorkerAlerts["effectHeld"] = ({ effectId, name, delivery }) => {
    const alert = heldDetails(effectId, name, delivery);
    options.metrics?.effectHeld(delivery.target);
    log.error(
      { ...alert, outcome: "effect-held" },
      "effect held for a human: an earlier claim went stale",
    );
    try {
      Promise.resolve(options.alerts?.onEffectHeld?.(alert)).catch((error: unknown) =>
        log.error({ err: (error as Error).message }, "onEffectHeld alert failed"),
      );
    } catch (error) {
      log.error({ err: (error as Error).message }, "onEffectHeld alert failed");
    }
  };

  return {
    start() {
      if (stopped) return;
      deadLetter();
      timers.push(setInterval(deadLetter, options.sweepEveryMs));
      if (outbox)
        timers.push(
          setInterval(
            () => void sendAlerts(),
            Math.min(5_000, Math.max(250, options.pollIntervalMs)),
          ),
        );
      for (const timer of timers) timer.unref?.();
    },
    deadLetter,
    effectHeld,
    heldAlert,
    stop() {
      stopped = true;
      for (const timer of timers.splice(0)) clearInterval(timer);
    },
    async settled() {
      while (sweep) await sweep;
    },
  };
}
