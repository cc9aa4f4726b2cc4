import type { ResolvedAlerts } from "../config/resolve.ts";
import type { AlertOccurrence } from "../store/alert-types.ts";
import type { QueueStore } from "../store/queue-types.ts";
import { alertSinks } from "./occurrences.ts";

type ThresholdStore = Pick<
  QueueStore,
  "queueGauges" | "receiptCounts" | "latestAlertKind" | "recordAlerts"
>;

/** The figures thresholds compare, as measured at one time. */
export interface ThresholdReading {
  readonly oldestUnprocessedAgeMs: number;
  readonly duplicateRate: number;
  readonly receipts: number;
}

/**
 * Reads the age of the oldest unfinished delivery (pending, blocked or running) and the share of
 * accepted receipts in the last window that were duplicates.
 *
 * @example
 * ```ts
 * await readThresholds(store, 300_000, Date.now()); // { oldestUnprocessedAgeMs: 0, duplicateRate: 0, receipts: 0 }
 * ```
 */
export async function readThresholds(
  store: ThresholdStore,
  windowMs: number,
  now: number,
): Promise<ThresholdReading> {
  const [gauges, counts] = await Promise.all([
    store.queueGauges(),
    store.receiptCounts(now - windowMs),
  ]);
  const oldest = gauges.deliveries
    .filter((row) => row.status !== "dead")
    .reduce((min, row) => Math.min(min, row.oldestCreatedAt), Number.POSITIVE_INFINITY);
  return {
    oldestUnprocessedAgeMs: Number.isFinite(oldest) ? Math.max(0, now - oldest) : 0,
    duplicateRate: counts.receipts === 0 ? 0 : counts.duplicates / counts.receipts,
    receipts: counts.receipts,
  };
}

/**
 * Compares the readings with `alerts.thresholds` and writes a `threshold-crossed` alert when a
 * figure went above its threshold and a `threshold-recovered` one when it came back, judged
 * against the metric's latest alert in the store (so restarts and other processes agree), for each
 * configured sink (`alerts.webhook`, `alerts.onAlert`).
 * Returns the occurrences written.
 *
 * @example
 * ```ts
 * await evaluateThresholds(store, config.alerts, Date.now()); // [] while nothing changed
 * ```
 */
export async function evaluateThresholds(
  store: ThresholdStore,
  alerts: ResolvedAlerts,
  now: number,
): Promise<AlertOccurrence[]> {
  const { oldestUnprocessedAgeMs: ageLimit, duplicateRate: rateLimit } = alerts.thresholds;
  const sinks = alertSinks(alerts);
  if (sinks.length === 0 || (ageLimit === undefined && rateLimit === undefined)) return [];
  const reading = await readThresholds(store, alerts.windowMs, now);
  const checks = [
    ageLimit === undefined
      ? null
      : {
          metric: "oldest-unprocessed-age",
          value: reading.oldestUnprocessedAgeMs,
          threshold: ageLimit,
          unit: "ms",
        },
    rateLimit === undefined
      ? null
      : {
          metric: "duplicate-rate",
          value: reading.duplicateRate,
          threshold: rateLimit,
          unit: "ratio",
          receipts: reading.receipts,
        },
  ];
  const occurrences: AlertOccurrence[] = [];
  // Each sink keeps its own state (its own latest alert), so each hears every crossing once.
  for (const [sink, check] of sinks.flatMap((sink) => checks.map((c) => [sink, c] as const))) {
    if (!check) continue;
    const prefix = `${sink}threshold:${check.metric}:`;
    const firing = (await store.latestAlertKind(prefix)) === "threshold-crossed";
    const above = check.value > check.threshold;
    if (above === firing) continue;
    const kind = above ? "threshold-crossed" : "threshold-recovered";
    occurrences.push({
      condition: `${prefix}${above ? "crossed" : "recovered"}`,
      kind,
      payload: { ...check, windowMs: alerts.windowMs },
    });
  }
  if (occurrences.length > 0) {
    await store.recordAlerts(occurrences, { now, windowMs: alerts.windowMs });
  }
  return occurrences;
}
