import type { HookinboxConfig, SourceConfig } from "./schema.ts";

/**
 * Types a config object. It returns its argument unchanged: a config is a plain object.
 *
 * @example
 * ```ts
 * export default defineConfig({
 *   sources: { stripe: { provider: "stripe", secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] } },
 * });
 * ```
 */
export function defineConfig(config: HookinboxConfig): HookinboxConfig {
  return config;
}

type Options<P extends SourceConfig["provider"]> = Omit<
  Extract<SourceConfig, { provider: P }>,
  "provider"
>;

/**
 * A Stripe source (`Stripe-Signature`, id from the body's `id`). Sugar for `{ provider: "stripe", … }`.
 *
 * @example
 * ```ts
 * sources: { stripe: stripe({ secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }], tolerance: "5m" }) }
 * ```
 */
export function stripe(options: Options<"stripe">): SourceConfig {
  return { provider: "stripe", ...options };
}

/**
 * A GitHub source (`X-Hub-Signature-256`, id from `X-GitHub-Delivery`).
 *
 * @example
 * ```ts
 * sources: { github: github({ secrets: [{ env: "GITHUB_WEBHOOK_SECRET" }] }) }
 * ```
 */
export function github(options: Options<"github">): SourceConfig {
  return { provider: "github", ...options };
}

/**
 * A Standard Webhooks source (`webhook-*` or `svix-*` headers, `whsec_` secrets).
 *
 * @example
 * ```ts
 * sources: { clerk: standardWebhooks({ secrets: [{ env: "CLERK_WEBHOOK_SECRET" }] }) }
 * ```
 */
export function standardWebhooks(options: Options<"standard-webhooks">): SourceConfig {
  return { provider: "standard-webhooks", ...options };
}

/**
 * A generic HMAC source for senders with their own scheme.
 *
 * @example
 * ```ts
 * sources: { crm: hmac({ header: "x-signature", secrets: ["s"], identity: { id: "$.eventId" } }) }
 * ```
 */
export function hmac(options: Options<"hmac">): SourceConfig {
  return { provider: "hmac", ...options };
}
