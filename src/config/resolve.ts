import type { z } from "zod";
import type { AlertNotice, DestinationDisabledAlert, EffectHeldAlert } from "../alerts/types.ts";
import { hookinboxError } from "../errors.ts";
import { defaultMaxHops } from "../forward/hops.ts";
import { refuseOwnWebhookDestinations } from "../forward/own-webhooks.ts";
import { type ResolvedDestination, resolveDestination } from "../forward/resolve-destinations.ts";
import { compileRoutes, type RouteTable } from "../forward/route-table.ts";
import { compilePattern, type ResolvedHandler, type RetryPolicy } from "../handlers/routes.ts";
import type { Handler } from "../handlers/types.ts";
import { type AddressList, addressList } from "../ingest/ip-allow.ts";
import { compileRunbooks, type Runbooks } from "../operations/runbook-lookup.ts";
import type { AnyProviderScheme, IdentitySpec } from "../providers/types.ts";
import type { DeadLetterAlert } from "../store/queue-types.ts";
import { formatIssues } from "./format-issues.ts";
import { compileIdentity } from "./identity.ts";
import { resolveAlertDelivery } from "./resolve-alerts.ts";
import { type MinBodyRate, resolveMinBodyRate } from "./resolve-min-body-rate.ts";
import { type ResolvedRetention, resolveRetention } from "./resolve-retention.ts";
import { configSchema, type HookinboxConfig, type retrySchema } from "./schema.ts";
import { type SchemeRuntime, schemeFor } from "./scheme-for.ts";
import { type ResolvedSecret, resolveSecret } from "./secrets.ts";
import { parseDuration, parseSize } from "./units.ts";

/** The default store: an SQLite file under ./.hookinbox, no server needed. */
export const defaultStoreUrl = "sqlite:./.hookinbox/hookinbox.db";

/** One source ready for ingest: its verifier, identity mapping and resolved secrets. */
export interface ResolvedSource {
  readonly name: string;
  readonly provider: string;
  readonly scheme: AnyProviderScheme;
  readonly identity: IdentitySpec;
  readonly secrets: readonly ResolvedSecret[];
  /** Addresses allowed to deliver (after trusted proxies); null allows any. */
  readonly allowIps: AddressList | null;
}

/** Defaults of the retry policy: Standard Webhooks' suggested schedule, about 28 hours in all. */
export const defaultRetrySchedule = ["5s", "5m", "30m", "2h", "5h", "10h", "10h"] as const;

/** Worker settings after defaults. */
export interface ResolvedWorker {
  readonly enabled: boolean;
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly pollIntervalMs: number;
  readonly shutdownTimeoutMs: number;
}

/** Alert hooks (functions from the config). */
export interface ResolvedAlerts {
  readonly onDeadLetter?: (alert: DeadLetterAlert) => unknown;
  readonly onEffectHeld?: (alert: EffectHeldAlert) => unknown;
  readonly onDestinationDisabled?: (alert: DestinationDisabledAlert) => unknown;
  /**
   * Called from the outbox like the webhook (same conditions, one call per condition per window
   * with the count); a throw or rejection is retried with the webhook's backoff.
   */
  readonly onAlert?: (alert: AlertNotice) => unknown;
  /** Where alerts are sent from the outbox (absent: no outbox rows are written). */
  readonly webhook?: {
    readonly url: string;
    readonly secret: ResolvedSecret;
    readonly headers: Readonly<Record<string, string>>;
    /** The SSRF guard is off: the URL may reach loopback, private and link-local addresses. */
    readonly allowPrivateNetworks: boolean;
  };
  readonly thresholds: {
    readonly oldestUnprocessedAgeMs?: number;
    readonly duplicateRate?: number;
  };
  readonly windowMs: number;
}

/** The audit log's settings after defaults (see `audit` in the config schema). */
export interface ResolvedAudit {
  readonly enabled: boolean;
  /** The signing key's text (PEM or seed), or null for the key file. */
  readonly key: string | null;
  readonly headIntervalMs: number;
  /** How long after its accept a leaf may wait to be sequenced (PostgreSQL; ≥ 1 s). */
  readonly maxMergeDelayMs: number;
  readonly witness: {
    readonly file: string | null;
    readonly url: string | null;
    /** Lets the witness URL reach loopback, private and link-local addresses. */
    readonly allowPrivateNetworks: boolean;
  };
}

/** The config after validation, defaults, unit parsing and secret resolution. */
export interface ResolvedConfig {
  readonly store: string;
  readonly http: {
    readonly host: string;
    readonly port: number;
    readonly bodyLimit: number;
    readonly readTimeoutMs: number;
    /** Socket hygiene (the gateway's server; a library host keeps its own). */
    readonly idleTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
    readonly headersTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly maxConnections: number;
    /** Open connections per remote address (IPv6 per /64); null: no share. */
    readonly maxConnectionsPerAddress: number | null;
    /** The slowest a body may arrive once its grace has passed; null: no minimum. */
    readonly minBodyRate: MinBodyRate | null;
    readonly drainTimeoutMs: number;
    readonly publicUrl: string | null;
    /** Verified requests that passed through hookinbox more often than this get 508. */
    readonly maxHops: number;
    readonly trustedProxies: AddressList | null;
    readonly rejectLimit: { readonly max: number; readonly windowMs: number };
    /** Rejected receipts older than this are deleted (the same as retention.rejectedMs). */
    readonly rejectedRetentionMs: number;
  };
  readonly admin: {
    readonly token: string | null;
    /** The read-only token (`admin.readToken`); null: none. */
    readonly readToken: string | null;
    /** Event streams open at once in this process. */
    readonly maxStreams: number;
    readonly authLimit: { readonly max: number; readonly windowMs: number };
  };
  /** Retention windows (see `retention` in the config schema). */
  readonly retention: ResolvedRetention;
  readonly audit: ResolvedAudit;
  /** `port` null: no listener of its own (admins still read `/api/metrics`). */
  readonly metrics: {
    readonly enabled: boolean;
    readonly host: string;
    readonly port: number | null;
  };
  readonly log: { readonly level: string };
  /** Spans on the global OpenTelemetry provider (docs/operations.md#traces). */
  readonly tracing: { readonly enabled: boolean };
  readonly sources: ReadonlyMap<string, ResolvedSource>;
  /** Handlers by pattern, in configured order. */
  readonly handlers: ReadonlyMap<string, ResolvedHandler>;
  readonly worker: ResolvedWorker;
  readonly alerts: ResolvedAlerts;
  readonly runbooks: Runbooks;
  /** Destinations by name, in configured order. */
  readonly destinations: ReadonlyMap<string, ResolvedDestination>;
  /** The targets (handler patterns and destination names) of one event, and its route transforms. */
  readonly route: RouteTable;
}

type RetryInput = Omit<z.input<typeof retrySchema>, "schedule"> & {
  readonly schedule?: readonly (string | number)[] | undefined;
};

function retryPolicy(
  base: Readonly<RetryInput> | undefined,
  override: Readonly<RetryInput> | undefined,
): RetryPolicy {
  const schedule = override?.schedule ?? base?.schedule ?? defaultRetrySchedule;
  const scheduleMs = schedule.map((d) => parseDuration(d) ?? 0);
  return {
    scheduleMs,
    maxAttempts: override?.maxAttempts ?? base?.maxAttempts ?? scheduleMs.length + 1,
    jitter: override?.jitter ?? base?.jitter ?? "full",
  };
}

function resolveHandlers(
  config: HookinboxConfig,
  sources: ReadonlyMap<string, ResolvedSource>,
  leaseMs: number,
) {
  const handlers = new Map<string, ResolvedHandler>();
  const problems: string[] = [];
  for (const [pattern, entry] of Object.entries(config.handlers ?? {})) {
    const sourcePart = pattern === "*" ? "*" : pattern.slice(0, pattern.indexOf(":"));
    if (!sourcePart.includes("*") && !sources.has(sourcePart)) {
      problems.push(
        `handlers["${pattern}"]: no source named "${sourcePart}" (sources: ${[...sources.keys()].join(", ") || "none"})`,
      );
      continue;
    }
    const { handler, options } =
      typeof entry === "function" ? { handler: entry, options: undefined } : entry;
    handlers.set(pattern, {
      target: pattern,
      handler: handler as Handler,
      leaseMs: options?.lease === undefined ? leaseMs : (parseDuration(options.lease) ?? leaseMs),
      timeoutMs: parseDuration(options?.timeout ?? "5m") ?? 300_000,
      retry: retryPolicy(config.retry, options?.retry),
      stale: options?.stale ?? "skip",
      onDeadLetter: options?.onDeadLetter ?? "block",
      matches: compilePattern(pattern),
    });
  }
  if (problems.length > 0)
    throw hookinboxError("HOOKINBOX_CONFIG_INVALID", `\n  - ${problems.join("\n  - ")}`);
  return handlers;
}

/**
 * Applies the environment named by HOOKINBOX_ENV when the config has `environments`: its keys
 * replace the base config's, and its `sources` and `handlers` replace the base's entries of the
 * same name, so a staging secret lives only in the staging environment and can never validate
 * production traffic. A config with environments and no HOOKINBOX_ENV fails closed.
 *
 * @example
 * ```ts
 * selectEnvironment({ environments: { staging: { sources: {…} } } }, { HOOKINBOX_ENV: "staging" });
 * ```
 */
export function selectEnvironment(
  input: unknown,
  env: Record<string, string | undefined>,
): { config: unknown; name: string | null } {
  const environments = (input as { environments?: unknown } | null | undefined)?.environments;
  if (environments === undefined) return { config: input, name: null };
  if (environments === null || typeof environments !== "object" || Array.isArray(environments)) {
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      "\n  - environments: expected an object of named environments",
    );
  }
  const names = Object.keys(environments);
  const name = env.HOOKINBOX_ENV;
  if (!name || !names.includes(name)) {
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      `\n  - environments: set HOOKINBOX_ENV to one of ${names.map((n) => `"${n}"`).join(", ")}${name ? ` (got "${name}")` : ""}`,
    );
  }
  const { environments: _all, ...base } = input as Record<string, unknown>;
  const overlay = (environments as Record<string, unknown>)[name];
  if (overlay === null || typeof overlay !== "object" || Array.isArray(overlay)) {
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      `\n  - environments.${name}: expected an object`,
    );
  }
  const merged: Record<string, unknown> = { ...base, ...overlay };
  for (const key of ["sources", "handlers", "destinations"] as const) {
    const a = base[key] as Record<string, unknown> | undefined;
    const b = (overlay as Record<string, unknown>)[key] as Record<string, unknown> | undefined;
    if (a || b) merged[key] = { ...a, ...b };
  }
  return { config: merged, name };
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
  runtime: SchemeRuntime = {},
): ResolvedConfig {
  const selected = selectEnvironment(input, env);
  const parsed = configSchema.safeParse(selected.config ?? {});
  if (!parsed.success) {
    const lines = formatIssues(configSchema, selected.config, parsed.error.issues);
    const where = selected.name ? ` (environment "${selected.name}")` : "";
    throw hookinboxError("HOOKINBOX_CONFIG_INVALID", `${where}\n  - ${lines.join("\n  - ")}`);
  }
  const config: HookinboxConfig = parsed.data;
  const sources = new Map<string, ResolvedSource>();
  for (const [name, source] of Object.entries(config.sources ?? {})) {
    // Sources verified with the provider's public keys (SNS, Pub/Sub, PayPal) have no secrets.
    const secrets = (("secrets" in source ? source.secrets : undefined) ?? []).map(
      (secret, index) => resolveSecret(secret, index, `sources.${name}.secrets[${index}]`, env),
    );
    const scheme = schemeFor(name, source, config.http?.publicUrl, { ...runtime, env });
    sources.set(name, {
      name,
      provider: source.provider,
      scheme,
      identity: { ...scheme.identity, ...compileIdentity(source.identity) },
      secrets,
      allowIps: source.allowIps ? addressList(source.allowIps) : null,
    });
  }
  const adminToken =
    config.admin?.token !== undefined
      ? resolveSecret(config.admin.token, 0, "admin.token", env).value
      : (env.HOOKINBOX_ADMIN_TOKEN ?? null);
  const leaseMs = parseDuration(config.worker?.lease ?? "30s") ?? 30_000;
  const retention = resolveRetention(config.retention, config.http?.rejectedRetention);
  const readTimeoutMs = parseDuration(config.http?.readTimeout ?? "30s") ?? 30_000;
  const maxConnections = config.http?.maxConnections ?? 1000;
  const handlers = resolveHandlers(config, sources, leaseMs);
  const destinations = new Map<string, ResolvedDestination>();
  for (const [name, destination] of Object.entries(config.destinations ?? {})) {
    destinations.set(
      name,
      resolveDestination(name, destination, retryPolicy(config.retry, destination.retry), env),
    );
  }
  // A library inbox has no listener of its own: only the public URL tells its webhooks apart.
  refuseOwnWebhookDestinations(destinations.values(), {
    host: null,
    port: null,
    publicUrl: config.http?.publicUrl ?? null,
  });
  return {
    handlers,
    destinations,
    route: compileRoutes(
      handlers,
      new Set(destinations.keys()),
      new Set(sources.keys()),
      config.routes ?? [],
    ),
    worker: {
      enabled: config.worker?.enabled ?? true,
      concurrency: config.worker?.concurrency ?? 10,
      leaseMs,
      pollIntervalMs: parseDuration(config.worker?.pollInterval ?? "1s") ?? 1000,
      shutdownTimeoutMs: parseDuration(config.worker?.shutdownTimeout ?? "30s") ?? 30_000,
    },
    alerts: {
      ...resolveAlertDelivery(config.alerts, env),
      ...(config.alerts?.onDeadLetter
        ? { onDeadLetter: config.alerts.onDeadLetter as ResolvedAlerts["onDeadLetter"] }
        : {}),
      ...(config.alerts?.onEffectHeld
        ? { onEffectHeld: config.alerts.onEffectHeld as ResolvedAlerts["onEffectHeld"] }
        : {}),
      ...(config.alerts?.onAlert
        ? { onAlert: config.alerts.onAlert as ResolvedAlerts["onAlert"] }
        : {}),
      ...(config.alerts?.onDestinationDisabled
        ? {
            onDestinationDisabled: config.alerts
              .onDestinationDisabled as ResolvedAlerts["onDestinationDisabled"],
          }
        : {}),
    },
    store: env.DATABASE_URL || config.store || defaultStoreUrl,
    http: {
      host: config.http?.host ?? "127.0.0.1",
      port: config.http?.port ?? 8080,
      bodyLimit: parseSize(config.http?.bodyLimit ?? "1mb") ?? 1024 * 1024,
      readTimeoutMs,
      idleTimeoutMs: parseDuration(config.http?.idleTimeout ?? "10s") ?? 10_000,
      keepAliveTimeoutMs: parseDuration(config.http?.keepAliveTimeout ?? "65s") ?? 65_000,
      headersTimeoutMs: parseDuration(config.http?.headersTimeout ?? "20s") ?? 20_000,
      requestTimeoutMs:
        parseDuration(config.http?.requestTimeout ?? readTimeoutMs + 5_000) ??
        readTimeoutMs + 5_000,
      maxConnections,
      maxConnectionsPerAddress:
        config.http?.maxConnectionsPerAddress === false
          ? null
          : (config.http?.maxConnectionsPerAddress ?? Math.ceil(maxConnections / 10)),
      minBodyRate: resolveMinBodyRate(config.http?.minBodyRate),
      drainTimeoutMs: parseDuration(config.http?.drainTimeout ?? "10s") ?? 10_000,
      publicUrl: config.http?.publicUrl ?? null,
      maxHops: config.http?.maxHops ?? defaultMaxHops,
      trustedProxies: config.http?.trustedProxies ? addressList(config.http.trustedProxies) : null,
      rejectLimit: {
        max: config.http?.rejectLimit?.max ?? 60,
        windowMs: parseDuration(config.http?.rejectLimit?.window ?? "1m") ?? 60_000,
      },
      rejectedRetentionMs: retention.rejectedMs,
    },
    retention,
    admin: {
      token: adminToken || null,
      readToken:
        config.admin?.readToken !== undefined
          ? resolveSecret(config.admin.readToken, 0, "admin.readToken", env).value || null
          : null,
      maxStreams: config.admin?.maxStreams ?? 200,
      authLimit: {
        max: config.admin?.authLimit?.max ?? 10,
        windowMs: parseDuration(config.admin?.authLimit?.window ?? "1m") ?? 60_000,
      },
    },
    audit: {
      enabled: config.audit?.enabled ?? true,
      key:
        config.audit?.key !== undefined
          ? resolveSecret(config.audit.key, 0, "audit.key", env).value
          : env.HOOKINBOX_AUDIT_KEY || null,
      headIntervalMs: parseDuration(config.audit?.headInterval ?? "1m") ?? 60_000,
      maxMergeDelayMs: parseDuration(config.audit?.maxMergeDelay ?? "10s") ?? 10_000,
      witness: {
        file: config.audit?.witness?.file ?? null,
        url: config.audit?.witness?.url ?? null,
        allowPrivateNetworks: config.audit?.witness?.allowPrivateNetworks ?? false,
      },
    },
    runbooks: compileRunbooks(config.runbooks),
    metrics: {
      enabled: config.metrics?.enabled ?? true,
      host: config.metrics?.host ?? "127.0.0.1",
      port: config.metrics?.port ?? null,
    },
    log: { level: config.log?.level ?? "info" },
    tracing: { enabled: config.tracing?.enabled ?? false },
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
  // The selected environment's store wins over the base config's.
  const hasEnvironments =
    (input as { environments?: unknown } | null | undefined)?.environments !== undefined;
  const config = hasEnvironments ? selectEnvironment(input, env).config : input;
  const store = (config as { store?: unknown } | null | undefined)?.store;
  return env.DATABASE_URL || (typeof store === "string" && store) || defaultStoreUrl;
}
