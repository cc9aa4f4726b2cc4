import { hookinboxError } from "../errors.ts";
import { providerFor } from "../providers/all.ts";
import type { SchemeContext } from "../providers/definition.ts";
import type { KeyFetcher } from "../providers/keys/index.ts";
import type { AnyProviderScheme } from "../providers/types.ts";
import type { SourceConfig } from "./schema.ts";
import { resolveSecret } from "./secrets.ts";
import { parseDuration } from "./units.ts";

/** Stripe's and Standard Webhooks' documented window, when a source sets none. */
const defaultToleranceMs = 300_000;

function requireUrl(value: string | undefined, where: string, why: string): string {
  if (value === undefined) {
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      `\n  - ${where}: ${why}; set http.publicUrl or ${where}`,
    );
  }
  return value.replace(/\/+$/, "");
}

/** What schemes need from the process rather than the config file. */
export interface SchemeRuntime {
  /** Fetches providers' public keys (default: HTTPS with Node's `fetch`; tests inject one). */
  readonly keyFetcher?: KeyFetcher;
  /** The environment, for secrets that are options of a scheme (Meta's verify tokens). */
  readonly env?: Record<string, string | undefined>;
}

/**
 * Builds a source's provider scheme from its config, with the scheme factory its provider's
 * definition registers (src/providers/registry.ts). Providers with their own documented window
 * (Paddle 5 s, Linear 60 s, Twitch 10 min…) keep it unless the source sets `tolerance`.
 *
 * @example
 * ```ts
 * schemeFor("stripe", { provider: "stripe", secrets: ["whsec_…"] }, undefined).provider; // "stripe"
 * ```
 */
export function schemeFor(
  name: string,
  source: SourceConfig,
  httpPublicUrl: string | undefined,
  runtime: SchemeRuntime = {},
): AnyProviderScheme {
  const provider = providerFor(source.provider);
  if (provider === undefined) {
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      `\n  - sources.${name}.provider: unknown provider "${source.provider}"`,
    );
  }
  const configured =
    "tolerance" in source && source.tolerance !== undefined
      ? parseDuration(source.tolerance)
      : undefined;
  const at = `sources.${name}`;
  const context: SchemeContext = {
    source: name,
    toleranceMs: configured ?? defaultToleranceMs,
    window: configured === undefined ? {} : { toleranceMs: configured },
    keys: runtime.keyFetcher ? { fetcher: runtime.keyFetcher } : {},
    publicUrl: (own, option, why) => requireUrl(own ?? httpPublicUrl, `${at}.${option}`, why),
    endpointUrl: (own, option, why) =>
      own ?? `${requireUrl(httpPublicUrl, `${at}.${option}`, why)}/webhooks/${name}`,
    secret: (value, index, option) =>
      resolveSecret(value, index, `${at}.${option}`, runtime.env ?? {}).value,
  };
  // The source was validated against this provider's own schema (config/schema.ts).
  return (provider.scheme as (source: unknown, context: SchemeContext) => AnyProviderScheme)(
    source,
    context,
  );
}
