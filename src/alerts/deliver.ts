import type { ResolvedAlerts } from "../config/resolve.ts";
import { type Resolver, systemResolver } from "../forward/address-guard.ts";
import { type DestinationClient, openDestinationClient } from "../forward/http-client.ts";
import { signStandardWebhook } from "../forward/sign.ts";
import type { Logger } from "../log.ts";
import type { OutboxAlert } from "../store/alert-types.ts";
import type { QueueStore } from "../store/queue-types.ts";
import { sinkPrefixes } from "./occurrences.ts";
import type { AlertNotice } from "./types.ts";

type OutboxStore = Pick<QueueStore, "claimDueAlerts" | "settleAlert" | "pruneAlerts">;

/** The first retry waits this long, doubling per attempt up to `maxBackoffMs`. */
const firstBackoffMs = 5_000;
const maxBackoffMs = 10 * 60_000;
const requestTimeoutMs = 10_000;
/** Alerts claimed per pass: sent one after another, each within `requestTimeoutMs`. */
const claimLimit = 10;
/**
 * How long a claimed alert stays out of other processes' passes: longer than a whole pass
 * (10 × 10 s), so one alert is never sent by two processes at once; a process that dies mid-pass
 * leaves its alerts due again after this.
 */
export const alertClaimLeaseMs = 120_000;
/** Delivered alerts are kept this long (for `alert_outbox` readers), then pruned. */
const deliveredRetentionMs = 7 * 86_400_000;
const pruneEveryMs = 3_600_000;
const lastPruned = new WeakMap<OutboxStore, number>();

/**
 * When a failed alert is tried again: 5s after the first failure, doubling up to 10 minutes.
 *
 * @example
 * ```ts
 * alertRetryAt(0, 1_000); // 6_000
 * ```
 */
export function alertRetryAt(attemptsBefore: number, now: number): number {
  return now + Math.min(maxBackoffMs, firstBackoffMs * 2 ** Math.min(attemptsBefore, 20));
}

/**
 * The JSON body of an alert: the same bytes on every attempt (the count is final once the alert
 * is due, as later occurrences fold into the next one).
 *
 * @example
 * ```ts
 * JSON.parse(alertBody(row)).type; // "hookinbox.alert.dead-letter"
 * ```
 */
export function alertBody(alert: OutboxAlert): string {
  return JSON.stringify({
    type: `hookinbox.alert.${alert.kind}`,
    timestamp: new Date(alert.createdAt).toISOString(),
    data: {
      alertId: alert.id,
      condition: alert.condition,
      kind: alert.kind,
      count: alert.count,
      firstAt: new Date(alert.createdAt).toISOString(),
      lastAt: new Date(alert.lastAt).toISOString(),
      details: JSON.parse(alert.payload) as unknown,
    },
  });
}

/**
 * Sends every due alert of the outbox to `alerts.webhook`, signed as a Standard Webhooks message
 * whose `webhook-id` is the alert's id, and marks it delivered on 2xx or schedules its retry.
 * Alerts are claimed with a lease first, so processes sharing a store never send one alert twice
 * at once. At least once: an alert sent but not marked (a crash between) is sent again with the
 * same id after the lease. Rows of the function sink (`function:` conditions) are handed to
 * `alerts.onAlert` instead, marked delivered once it returns and retried with the same backoff
 * when it throws. Delivered alerts older than 7 days are pruned, once an hour at most.
 * The webhook gets a destination's SSRF guard: loopback, private, link-local and metadata
 * addresses are refused (logged with HOOKINBOX_FORWARD_ADDRESS_REFUSED and retried like any
 * failure) unless `webhook.allowPrivateNetworks`, and a 3xx is a failure, never followed.
 * Returns how many were delivered.
 *
 * @example
 * ```ts
 * await deliverDueAlerts(store, config.alerts, logger, Date.now());
 * ```
 */
export async function deliverDueAlerts(
  store: OutboxStore,
  alerts: ResolvedAlerts | undefined,
  logger: Logger,
  now: number,
  resolver: Resolver = systemResolver,
): Promise<number> {
  const webhook = alerts?.webhook;
  const onAlert = alerts?.onAlert;
  if (!webhook && !onAlert) return 0;
  let delivered = 0;
  if (now - (lastPruned.get(store) ?? Number.NEGATIVE_INFINITY) >= pruneEveryMs) {
    lastPruned.set(store, now);
    await store.pruneAlerts(now - deliveredRetentionMs, 1_000);
  }
  const due = await store.claimDueAlerts(now, claimLimit, alertClaimLeaseMs);
  // One guarded client per pass (opened only when a webhook row is due), closed after it.
  let client: DestinationClient | null = null;
  try {
    for (const alert of due) {
      // A row of a sink this process lacks is left to its lease (a process that has it sends it).
      let failure: AlertFailure | null;
      if (alert.condition.startsWith(sinkPrefixes.function)) {
        if (!onAlert) continue;
        const error = await callAlertFunction(onAlert, alert);
        failure = error === null ? null : { error, code: "HOOKINBOX_ALERT_FAILED" };
      } else {
        if (!webhook) continue;
        client ??= openDestinationClient(new URL(webhook.url), {
          connections: 1,
          allowPrivateNetworks: webhook.allowPrivateNetworks,
          resolver,
        });
        failure = await postAlert(client, webhook, alert, now, logger);
      }
      await settle(store, logger, alert, failure, now);
      if (failure === null) delivered++;
    }
  } finally {
    await client?.close();
  }
  return delivered;
}

/** Why one send failed, and the code its log line carries. */
interface AlertFailure {
  readonly error: string;
  readonly code:
    | "HOOKINBOX_ALERT_FAILED"
    | "HOOKINBOX_ALERT_UNSIGNED"
    | "HOOKINBOX_FORWARD_ADDRESS_REFUSED";
}

/** Posts one alert, signed, through the guarded client; null on 2xx, else what went wrong. */
async function postAlert(
  client: DestinationClient,
  webhook: NonNullable<ResolvedAlerts["webhook"]>,
  alert: OutboxAlert,
  now: number,
  logger: Logger,
): Promise<AlertFailure | null> {
  const body = Buffer.from(alertBody(alert), "utf8");
  const signature = signStandardWebhook([webhook.secret], alert.id, body, now);
  if (!signature) {
    logger.error(
      { alertId: alert.id, code: "HOOKINBOX_ALERT_UNSIGNED" },
      "alert secret not active",
    );
    return { error: "HOOKINBOX_ALERT_UNSIGNED", code: "HOOKINBOX_ALERT_UNSIGNED" };
  }
  const result = await client.post(
    { ...webhook.headers, ...signature, "content-type": "application/json" },
    body,
    requestTimeoutMs,
    new AbortController().signal,
  );
  if (result.status === null)
    return {
      error: result.error ?? "no response",
      code: result.refused ? "HOOKINBOX_FORWARD_ADDRESS_REFUSED" : "HOOKINBOX_ALERT_FAILED",
    };
  if (result.status >= 200 && result.status < 300) return null;
  const followed = result.status >= 300 && result.status < 400 ? " (never followed)" : "";
  return { error: `HTTP ${result.status}${followed}`, code: "HOOKINBOX_ALERT_FAILED" };
}

/** Marks an alert delivered (`error` null) or logs the failure and schedules its retry. */
async function settle(
  store: OutboxStore,
  logger: Logger,
  alert: OutboxAlert,
  failure: AlertFailure | null,
  now: number,
): Promise<void> {
  if (failure === null) {
    await store.settleAlert(alert.id, { delivered: true, now });
    return;
  }
  if (failure.code !== "HOOKINBOX_ALERT_UNSIGNED")
    logger.warn(
      { alertId: alert.id, attempts: alert.attempts + 1, err: failure.error, code: failure.code },
      failure.code === "HOOKINBOX_FORWARD_ADDRESS_REFUSED"
        ? "alert webhook address refused (alerts.webhook.allowPrivateNetworks is off); will retry"
        : "alert delivery failed; will retry",
    );
  await store.settleAlert(alert.id, {
    delivered: false,
    retryAt: alertRetryAt(alert.attempts, now),
    error: failure.error,
  });
}

/**
 * What `alerts.onAlert` receives for an outbox row of the function sink: the webhook message's
 * data and type, the condition without the sink's prefix.
 *
 * @example
 * ```ts
 * alertNotice(row).condition; // "dead-letter:stripe:app"
 * ```
 */
export function alertNotice(alert: OutboxAlert): AlertNotice {
  const { type, data } = JSON.parse(alertBody(alert)) as {
    type: string;
    data: Omit<AlertNotice, "type">;
  };
  const condition = data.condition.startsWith(sinkPrefixes.function)
    ? data.condition.slice(sinkPrefixes.function.length)
    : data.condition;
  return { type, ...data, condition };
}

/** Calls `alerts.onAlert`; null when it returned, else the failure's message. */
async function callAlertFunction(
  onAlert: NonNullable<ResolvedAlerts["onAlert"]>,
  alert: OutboxAlert,
): Promise<string | null> {
  try {
    await onAlert(alertNotice(alert));
    return null;
  } catch (failure) {
    return failure instanceof Error ? failure.message : String(failure);
  }
}
