import type { HookinboxConfig } from "../config/schema.ts";
import { type ResolvedSecret, resolveSecret } from "../config/secrets.ts";
import { parseDuration } from "../config/units.ts";
import { hookinboxError } from "../errors.ts";
import type { RetryPolicy } from "../handlers/routes.ts";
import { standardWebhooksKey } from "../providers/standard-webhooks.ts";
import { isBusInput, resolveBus } from "./bus/resolve-bus.ts";
import type { BusSettings } from "./bus/types.ts";
import { type CircuitPolicy, defaultCircuitPolicy } from "./circuit-policy.ts";
import { type ResolvedTransform, resolveTransform } from "./transform.ts";

/** One destination ready for the worker. */
export interface ResolvedDestination {
  readonly name: string;
  /** `http`, or the broker of a queue destination. */
  readonly type: "http" | BusSettings["type"];
  /** The HTTP URL, or the broker's (it may hold a password: shown without it). */
  readonly url: URL;
  /** A queue destination's broker settings; null for HTTP. */
  readonly bus: BusSettings | null;
  /** Standard Webhooks signing secrets, in configured order (rotation windows apply). */
  readonly secrets: readonly ResolvedSecret[];
  readonly timeoutMs: number;
  readonly concurrency: number;
  /** Attempts started per window, across processes; null for no limit. */
  readonly rateLimit: { readonly max: number; readonly perMs: number } | null;
  readonly headers: Readonly<Record<string, string>>;
  /** Original headers forwarded beyond the allowlist (lower-case). */
  readonly forwardHeaders: ReadonlySet<string>;
  readonly allowPrivateNetworks: boolean;
  readonly retry: RetryPolicy;
  readonly onDeadLetter: "block" | "continue";
  /** The circuit breaker's settings (circuit-policy.ts); null when turned off. */
  readonly circuitBreaker: CircuitPolicy | null;
  /** The lease a forward takes: the timeout plus room for bookkeeping. */
  readonly leaseMs: number;
  /** Its own `transform` (run after a route's), or null. */
  readonly transform: ResolvedTransform | null;
}

type DestinationInput = NonNullable<HookinboxConfig["destinations"]>[string];

/**
 * Resolves one destination: secrets from the environment (each must be a Standard Webhooks
 * secret, `whsec_` + base64), durations, defaults (timeout 15s, concurrency 10, the circuit
 * breaker's defaults of circuit-policy.ts). A queue destination (`type` amqp, nats or redis)
 * has its broker URL read (`{ env }` too) and its name templates defaulted (bus/resolve-bus.ts).
 *
 * @example
 * ```ts
 * resolveDestination("app", { url: "https://app.internal/hooks", secret: "whsec_…" }, policy, env);
 * resolveDestination("bus", { type: "nats", url: { env: "NATS_URL" } }, policy, env);
 * ```
 */
export function resolveDestination(
  name: string,
  input: DestinationInput,
  retry: RetryPolicy,
  env: Record<string, string | undefined>,
): ResolvedDestination {
  const common = deliverySettings(name, input, retry);
  if (isBusInput(input)) {
    const bus = resolveBus(name, input, env);
    return {
      ...common,
      name,
      type: bus.type,
      url: new URL(bus.url),
      bus,
      secrets: [],
      headers: {},
      forwardHeaders: new Set(),
      allowPrivateNetworks: true,
    };
  }
  const secretsIn = Array.isArray(input.secret) ? input.secret : [input.secret];
  const secrets = secretsIn.map((secret, index) => {
    const where = `destinations.${name}.secret${Array.isArray(input.secret) ? `[${index}]` : ""}`;
    const resolved = resolveSecret(secret, index, where, env);
    if (!standardWebhooksKey(resolved.value)) {
      throw hookinboxError(
        "HOOKINBOX_CONFIG_INVALID",
        `\n  - ${where}: expected a Standard Webhooks secret ("whsec_" followed by base64)`,
      );
    }
    return resolved;
  });
  return {
    ...common,
    name,
    type: "http",
    url: new URL(input.url),
    bus: null,
    secrets,
    headers: { ...input.headers },
    forwardHeaders: new Set((input.forwardHeaders ?? []).map((h) => h.toLowerCase())),
    allowPrivateNetworks: input.allowPrivateNetworks ?? false,
  };
}

/** The settings every destination type shares: timeout, flow control, retries, the breaker, its transform. */
function deliverySettings(name: string, input: DestinationInput, retry: RetryPolicy) {
  const timeoutMs = parseDuration(input.timeout ?? "15s") ?? 15_000;
  const rate = input.rateLimit;
  const breaker = input.circuitBreaker;
  return {
    timeoutMs,
    concurrency: input.concurrency ?? 10,
    rateLimit:
      rate === undefined
        ? null
        : typeof rate === "number"
          ? { max: rate, perMs: 1000 }
          : { max: rate.max, perMs: Math.max(1, parseDuration(rate.per) ?? 1000) },
    retry,
    onDeadLetter: input.onDeadLetter ?? "block",
    circuitBreaker: breaker === false ? null : circuitPolicy(breaker),
    leaseMs: timeoutMs + 10_000,
    transform: resolveTransform(
      input.transform,
      input.transformTimeout,
      `destinations.${name}.transform`,
    ),
  };
}

type BreakerInput = Exclude<DestinationInput["circuitBreaker"], false>;

/** The breaker's settings: the configured ones over circuit-policy.ts's defaults. */
function circuitPolicy(input: BreakerInput): CircuitPolicy {
  const d = defaultCircuitPolicy;
  const ms = (value: string | number | undefined, fallback: number) =>
    value === undefined ? fallback : (parseDuration(value) ?? fallback);
  return {
    failureRate: input?.failureRate ?? d.failureRate,
    windowMs: ms(input?.window, d.windowMs),
    minCalls: input?.minCalls ?? d.minCalls,
    downInRow: input?.downInRow ?? d.downInRow,
    cooldownMs: ms(input?.cooldown, d.cooldownMs),
    trials: input?.trials ?? d.trials,
  };
}
