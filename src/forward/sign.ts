import { createHmac } from "node:crypto";
import { activeSecrets, type ResolvedSecret } from "../config/secrets.ts";
import { standardWebhooksKey } from "../providers/standard-webhooks.ts";

/**
 * Standard Webhooks signature headers for one request: `webhook-id`, `webhook-timestamp`
 * (seconds) and `webhook-signature`, one `v1,<base64>` per secret active at `nowMs`
 * (space-separated, so a receiver that knows any one of them verifies during a rotation).
 * Returns null when no secret is active.
 *
 * @example
 * ```ts
 * signStandardWebhook(destination.secrets, "evt_01J…:app", body, Date.now());
 * // { "webhook-id": "evt_01J…:app", "webhook-timestamp": "1767225600", "webhook-signature": "v1,…" }
 * ```
 */
export function signStandardWebhook(
  secrets: readonly ResolvedSecret[],
  id: string,
  body: Uint8Array,
  nowMs: number,
): Record<string, string> | null {
  const active = activeSecrets(secrets, nowMs);
  if (active.length === 0) return null;
  const timestamp = String(Math.floor(nowMs / 1000));
  const prefix = Buffer.from(`${id}.${timestamp}.`, "utf8");
  const signatures = active.map((secret) => {
    const key = standardWebhooksKey(secret.value);
    if (!key) throw new Error("destination secret is not a Standard Webhooks secret");
    return `v1,${createHmac("sha256", key).update(prefix).update(body).digest("base64")}`;
  });
  return {
    "webhook-id": id,
    "webhook-timestamp": timestamp,
    "webhook-signature": signatures.join(" "),
  };
}

/**
 * The stable id of an event's delivery to one destination: the same on every attempt, every
 * operator retry and every replay of that event to that destination, so the app can deduplicate
 * on `webhook-id` alone.
 *
 * @example
 * ```ts
 * stableDeliveryId("evt_01J…", "app"); // "evt_01J…:app"
 * ```
 */
export function stableDeliveryId(eventId: string, destination: string): string {
  return `${eventId}:${destination}`;
}
