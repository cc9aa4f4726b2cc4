import type { HookinboxConfig } from "./schema.ts";

/**
 * Types a config object. It returns its argument unchanged: a config is a plain object.
 * The source helpers (`stripe({ … })`, `github({ … })`, …) come from the provider registry
 * (src/providers/registry.ts).
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
