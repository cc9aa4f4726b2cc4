import { createHmac } from "node:crypto";
import { activeSecrets, type ResolvedSecret } from "../config/secrets.ts";
import { standardWebhooksKey } from "../providers/standard-webhooks.ts";
import { hopsHeader, hopsSignatureHeader, hopsSignedContent } from "./hops.ts";

/**
 * Standard Webhooks signature headers for one request: `webhook-id`, `webhook-timestamp`
 * (seconds) and `webhook-signature`, one `v1,<base64>` per secret active at `nowMs`
 * (space-separated, so a receiver that knows any one of them verifies during a rotation).
 * Returns null when no secret is active.
 *
 * With `hops` (forwarding), also `hookinbox-hops` and `hookinbox-hops-signature`: the same
 * secrets' `v1,<base64 HMAC-SHA256>` of `hookinbox-hops.<hops>.<id>.<timestamp>`, so a receiver
 * that verifies both signatures knows the hop count came from the signer with this message (the
 * Standard Webhooks signature covers only id, timestamp and body, and stays as the spec says).
 *
 * @example
 * ```ts
 * signStandardWebhook(destination.secrets, "evt_01J…:app", body, Date.now());
 * // { "webhook-id": "evt_01J…:app", "webhook-timestamp": "1767225600", "webhook-signature": "v1,…" }
 * signStandardWebhook(destination.secrets, "evt_01J…:app", body, Date.now(), 1);
 * // { …, "hookinbox-hops": "1", "hookinbox-hops-signature": "v1,…" }
 * ```
 */
export function signStandardWebhook(
  secrets: readonly ResolvedSecret[],
  id: string,
  body: Uint8Array,
  nowMs: number,
  hops?: number,
): Record<string, string> | null {
  const active = activeSecrets(secrets, nowMs);
  if (active.length === 0) return null;
  const timestamp = String(Math.floor(nowMs / 1000));
  const prefix = Buffer.from(`${id}.${timestamp}.`, "utf8");
  const keys = active.map((secret) => {
    const key = standardWebhooksKey(secret.value);
    if (!key) throw new Error("destination secret is not a Standard Webhooks secret");
    return key;
  });
  const sign = (...parts: Array<string | Uint8Array>) =>
    keys
      .map((key) => {
        const hmac = createHmac("sha256", key);
        for (const part of parts) hmac.update(part);
        return `v1,${hmac.digest("base64")}`;
      })
      .join(" ");
  const headers: Record<string, string> = {
    "webhook-id": id,
    "webhook-timestamp": timestamp,
    "webhook-signature": sign(prefix, body),
  };
  if (hops !== undefined) {
    headers[hopsHeader] = String(hops);
    headers[hopsSignatureHeader] = sign(hopsSignedContent(hops, id, timestamp));
  }
  return headers;
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
