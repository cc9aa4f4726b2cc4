import { alertSinks, deadLetterOccurrence, forSinks } from "../alerts/occurrences.ts";
import type { ResolvedAlerts } from "../config/resolve.ts";
import type { Logger } from "../log.ts";
import type { QueueStore } from "../store/queue-types.ts";

/**
 * Sends the alert of every dead letter not yet confirmed: one error-level log line each, and the
 * configured `alerts.onDeadLetter` hook, and with `alerts.webhook` or `alerts.onAlert` an outbox
 * alert per sink written in the transaction that marks it. A dead letter is marked alerted once its hook returned,
 * so each alerts once in normal operation and again only if the process died before the mark.
 *
 * @example
 * ```ts
 * await sweepDeadLetterAlerts(store, config.alerts, logger, Date.now);
 * ```
 */
export async function sweepDeadLetterAlerts(
  store: QueueStore,
  alerts: ResolvedAlerts | undefined,
  logger: Logger,
  now: () => number,
): Promise<number> {
  let sent = 0;
  for (;;) {
    const pending = await store.pendingDeadLetterAlerts(100);
    if (pending.length === 0) return sent;
    const confirmed: string[] = [];
    for (const alert of pending) {
      logger.error(
        { ...alert, outcome: "dead-letter" },
        alert.blocksKey
          ? `delivery dead-lettered; its ordering key is blocked, ${alert.parked} waiting behind it`
          : "delivery dead-lettered",
      );
      try {
        await alerts?.onDeadLetter?.(alert);
        confirmed.push(alert.deliveryId);
      } catch (error) {
        logger.error(
          { deliveryId: alert.deliveryId, err: (error as Error).message },
          "onDeadLetter alert failed; will retry",
        );
      }
    }
    if (alerts && alertSinks(alerts).length > 0) {
      // The outbox rows and the marks commit together, and only the transaction that marks a
      // dead letter records it: each gets exactly one per sink, even with several processes sweeping.
      const sent = new Set(confirmed);
      await store.recordAlerts(
        forSinks(
          alerts,
          pending.filter((alert) => sent.has(alert.deliveryId)).map(deadLetterOccurrence),
        ),
        { now: now(), windowMs: alerts.windowMs },
      );
    } else {
      await store.markAlerted(confirmed, now());
    }
    sent += confirmed.length;
    if (confirmed.length < pending.length) return sent;
  }
}
