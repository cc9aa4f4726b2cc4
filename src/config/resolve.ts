import { hookinboxError } from "../errors.ts";
import { githubScheme } from "../providers/github.ts";
import { hmacScheme } from "../providers/hmac.ts";
import { standardWebhooksScheme } from "../providers/standard-webhooks.ts";
import { stripeScheme } from "../providers/stripe.ts";
import type { IdentitySpec, ProviderScheme } from "../providers/types.ts";
import { formatIssues } from "./format-issues.ts";
import { configSchema, type HookinboxConfig, type SourceConfig } from "./schema.ts";
import { type ResolvedSecret, resolveSecret } from "./secrets.ts";
import { parseDuration, parseSize } from "./units.ts";

/** The default store: an SQLite file under ./.hookinbox, no server needed. */
export const defaultStoreUrl = "sqlite:./.hookinbox/hookinbox.db";
const defaultToleranceMs = 300_000;

/** One source ready for ingest: its verifier, identity mapping and resolved secrets. */
export interface ResolvedSource {
  readonly name: string;
  readonly provider: string;
  readonly scheme: ProviderScheme;
  readonly identity: IdentitySpec;
  readonly secrets: readonly ResolvedSecret[];
}

/** The config after validation, defaults, unit parsing and secret resolution. */
export interface ResolvedConfig {
  readonly store: string;
  readonly http: {
    readonly host: string;
    readonly port: number;
    readonly bodyLimit: number;
    readonly readTimeoutMs: number;
  };
  readonly admin: { readonly token: string | null };
  readonly log: { readonly level: string };
  readonly sources: ReadonlyMap<string, ResolvedSource>;
}

function schemeFor(source: SourceConfig): ProviderScheme {
  const toleranceMs =
    "tolerance" in source && source.tolerance !== undefined
      ? (parseDuration(source.tolerance) ?? defaultToleranceMs)
      : defaultToleranceMs;
  switch (source.provider) {
    case "stripe":
      return stripeScheme({ toleranceMs });
    case "github":
      return githubScheme({ allowSha1: source.allowSha1 ?? false });
    case "standard-webhooks":
      return standardWebhooksScheme({ toleranceMs });
    case "hmac":
      return hmacScheme({
        header: source.header.toLowerCase(),
        prefix: source.prefix,
        algorithm: source.algorithm ?? "sha256",
        encoding: source.encoding ?? "hex",
        secretEncoding: source.secretEncoding ?? "utf8",
        signedContent: source.signedContent ?? "{body}",
        timestampHeader: source.timestampHeader?.toLowerCase(),
        timestampUnit: source.timestampUnit ?? "s",
        idHeader: source.idHeader?.toLowerCase(),
        toleranceMs,
      });
  }
}

/**
 * Validates a config object (unknown keys rejected, each error naming the key and the fix),
 * applies defaults, and resolves secrets from `env`. `DATABASE_URL` wins over `store` when set.
 *
 * @example
 * ```ts
 * const config = resolveConfig({ sources: { gh: { provider: "github", secrets: ["s"] } } }, process.env);
 * config.sources.get("gh")?.provider; // "github"
 * ```
 */
export function resolveConfig(
  input: unknown,
  env: Record<string, string | undefined> = process.env,
): ResolvedConfig {
  const parsed = configSchema.safeParse(input ?? {});
  if (!parsed.success) {
    const lines = formatIssues(configSchema, input, parsed.error.issues);
    throw hookinboxError("HOOKINBOX_CONFIG_INVALID", `\n  - ${lines.join("\n  - ")}`);
  }
  const config: HookinboxConfig = parsed.data;
  const sources = new Map<string, ResolvedSource>();
  for (const [name, source] of Object.entries(config.sources ?? {})) {
    const secrets = source.secrets.map((secret, index) =>
      resolveSecret(secret, index, `sources.${name}.secrets[${index}]`, env),
    );
    const scheme = schemeFor(source);
    sources.set(name, {
      name,
      provider: source.provider,
      scheme,
      identity: { ...scheme.identity, ...(source.identity ?? {}) },
      secrets,
    });
  }
  const adminToken =
    config.admin?.token !== undefined
      ? resolveSecret(config.admin.token, 0, "admin.token", env).value
      : (env.HOOKINBOX_ADMIN_TOKEN ?? null);
  return {
    store: env.DATABASE_URL || config.store || defaultStoreUrl,
    http: {
      host: config.http?.host ?? "127.0.0.1",
      port: config.http?.port ?? 8080,
      bodyLimit: parseSize(config.http?.bodyLimit ?? "1mb") ?? 1024 * 1024,
      readTimeoutMs: parseDuration(config.http?.readTimeout ?? "30s") ?? 30_000,
    },
    admin: { token: adminToken || null },
    log: { level: config.log?.level ?? "info" },
    sources,
  };
}

/**
 * The store URL alone (for commands that only read the store): `DATABASE_URL`, else
 * `config.store`, else the embedded default. Does not resolve secrets.
 *
 * @example
 * ```ts
 * resolveStoreUrl(rawConfig, process.env); // "sqlite:./.hookinbox/hookinbox.db"
 * ```
 */
export function resolveStoreUrl(input: unknown, env: Record<string, string | undefined>): string {
  const store = (input as { store?: unknown } | null | undefined)?.store;
  return env.DATABASE_URL || (typeof store === "string" && store) || defaultStoreUrl;
}
