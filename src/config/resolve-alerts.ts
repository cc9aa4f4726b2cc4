import { hookinboxError } from "../errors.ts";
import { standardWebhooksKey } from "../providers/standard-webhooks.ts";
import type { SecretConfig } from "./schema.ts";
import { resolveSecret } from "./secrets.ts";
import { parseDuration } from "./units.ts";

/** `alerts` as the config schema parsed it (the parts alert delivery reads). */
interface AlertDeliveryInput {
  readonly webhook?: {
    readonly url: string;
    readonly secret: SecretConfig;
    readonly headers?: Readonly<Record<string, string>>;
    readonly allowPrivateNetworks?: boolean;
  };
  readonly thresholds?: {
    readonly oldestUnprocessedAge?: string | number;
    readonly duplicateRate?: number;
  };
  readonly window?: string | number;
}

/**
 * Resolves the webhook, thresholds and window of `alerts`: the secret must be a Standard
 * Webhooks secret (`whsec_…`), the window defaults to 5 minutes, and the URL may reach private
 * networks only with `allowPrivateNetworks` (default false).
 *
 * @example
 * ```ts
 * resolveAlertDelivery({ webhook: { url: "https://ops.example/alerts", secret: "whsec_…" } }, process.env);
 * // { webhook: { url, secret, headers: {}, allowPrivateNetworks: false }, thresholds: {}, windowMs: 300000 }
 * ```
 */
export function resolveAlertDelivery(
  alerts: AlertDeliveryInput | undefined,
  env: Record<string, string | undefined>,
) {
  const webhook = alerts?.webhook;
  const secret = webhook ? resolveSecret(webhook.secret, 0, "alerts.webhook.secret", env) : null;
  if (secret && !standardWebhooksKey(secret.value)) {
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      `\n  - alerts.webhook.secret: expected a Standard Webhooks secret ("whsec_" followed by base64)`,
    );
  }
  const age = alerts?.thresholds?.oldestUnprocessedAge;
  const rate = alerts?.thresholds?.duplicateRate;
  return {
    ...(webhook && secret
      ? {
          webhook: {
            url: webhook.url,
            secret,
            headers: { ...webhook.headers },
            allowPrivateNetworks: webhook.allowPrivateNetworks ?? false,
          },
        }
      : {}),
    thresholds: {
      ...(age === undefined ? {} : { oldestUnprocessedAgeMs: parseDuration(age) ?? 0 }),
      ...(rate === undefined ? {} : { duplicateRate: rate }),
    },
    windowMs: parseDuration(alerts?.window ?? "5m") ?? 300_000,
  };
}
