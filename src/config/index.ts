export {
  adyen,
  defineConfig,
  discord,
  github,
  gitlab,
  hmac,
  hubspot,
  intercom,
  linear,
  mercadopago,
  paddle,
  sendgrid,
  shopify,
  slack,
  sns,
  square,
  standardWebhooks,
  stripe,
  twilio,
  twitch,
  zoom,
} from "./define.ts";
export { configFileNames, loadConfigFile } from "./load.ts";
export {
  defaultStoreUrl,
  type ResolvedConfig,
  type ResolvedSource,
  resolveConfig,
  resolveStoreUrl,
} from "./resolve.ts";
export type { HookinboxConfig, SecretConfig, SourceConfig } from "./schema.ts";
export { activeSecrets, type ResolvedSecret } from "./secrets.ts";
export { type Duration, parseDuration, parseSize, type Size } from "./units.ts";
