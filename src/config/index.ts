export * from "../providers/registry.ts";
export { defineConfig } from "./define.ts";
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
