import { hookinboxError } from "../errors.ts";
import type { DestinationState, DestinationStateRow } from "../store/forward-types.ts";
import type { Store } from "../store/types.ts";
import { type CircuitPhase, circuitPhase } from "./circuit-policy.ts";

/** A configured destination as the admin API and CLI know it (no secrets). */
export interface ConfiguredDestination {
  readonly name: string;
  /** `http` (the default when left out), `amqp`, `nats` or `redis`. */
  readonly type?: string | undefined;
  /** The URL, or the environment variable a queue destination's broker URL is read from. */
  readonly url: string | URL | { readonly env: string };
}

/**
 * `closed` delivers; `open` holds attempts until `circuitOpenUntil`; `half-open` lets its trials
 * through, and closes when they pass.
 */
export type CircuitState = CircuitPhase;

/** One destination's state and queue, for `GET /api/destinations` and `hookinbox destinations list`. */
export interface DestinationStatus {
  readonly name: string;
  /** `http`, or the broker of a queue destination: `amqp`, `nats`, `redis`. */
  readonly type: string;
  /** Scheme, host and path only: credentials and the query string are left out. */
  readonly url: string;
  /** `active`, `paused` (an operator), or `disabled` (the destination answered 410 Gone). */
  readonly state: DestinationState;
  readonly reason: string | null;
  /** When the state last changed (ISO 8601), or null. */
  readonly changedAt: string | null;
  readonly circuit: CircuitState;
  readonly circuitOpenUntil: string | null;
  /** Down results in a row: connect, timeout, reset or DNS failures (the circuit breaker's run). */
  readonly failures: number;
  /** Deliveries running now, in every process. */
  readonly inFlight: number;
  /** Deliveries waiting (pending, parked while paused, or blocked behind their ordering key). */
  readonly pending: number;
  /** Dead-lettered deliveries. */
  readonly dead: number;
}

/**
 * Names, types and URLs of resolved destinations (secrets stay out).
 *
 * @example
 * ```ts
 * configuredDestinations(inbox.config.destinations).map((d) => d.name); // ["app"]
 * ```
 */
export function configuredDestinations(
  destinations: ReadonlyMap<string, ConfiguredDestination>,
): ConfiguredDestination[] {
  return [...destinations.values()].map((d) => ({
    name: d.name,
    type: d.type ?? "http",
    url: d.url,
  }));
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function shownUrl(url: ConfiguredDestination["url"]): string {
  if (typeof url === "object" && "env" in url) return `$${url.env}`;
  const parsed = new URL(String(url));
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

function circuitOf(row: DestinationStateRow | undefined, now: number): CircuitState {
  return circuitPhase(row?.openUntil ?? null, now);
}

/**
 * The state and queue counts of every configured destination, in configured order.
 *
 * @example
 * ```ts
 * const items = await destinationStatuses(store, [{ name: "app", url: "https://app.internal/hooks" }], Date.now());
 * items[0]?.state; // "active"
 * ```
 */
export async function destinationStatuses(
  store: Store,
  configured: readonly ConfiguredDestination[],
  now: number,
): Promise<DestinationStatus[]> {
  await store.ensureDestinations(configured.map((d) => d.name));
  const [rows, gauges] = await Promise.all([store.listDestinationStates(), store.queueGauges()]);
  const byName = new Map(rows.map((row) => [row.name, row]));
  return configured.map((destination) => {
    const row = byName.get(destination.name);
    const count = (statuses: readonly string[]) =>
      gauges.deliveries
        .filter((g) => g.target === destination.name && statuses.includes(g.status))
        .reduce((sum, g) => sum + g.count, 0);
    return {
      name: destination.name,
      type: destination.type ?? "http",
      url: shownUrl(destination.url),
      state: row?.state ?? "active",
      reason: row?.reason ?? null,
      changedAt: iso(row?.changedAt ?? null),
      circuit: circuitOf(row, now),
      circuitOpenUntil: iso(row?.openUntil ?? null),
      failures: row?.failures ?? 0,
      inFlight: count(["running"]),
      pending: count(["pending", "blocked"]),
      dead: count(["dead"]),
    };
  });
}

/** What an operator can do to a destination. */
export type DestinationAction = "pause" | "resume" | "enable";

/**
 * Pauses, resumes or enables a configured destination and returns its new status. `pause` parks
 * its work (nothing fails; attempts already running finish); `resume` lets a paused destination
 * deliver again; `enable` brings back one disabled by a 410 Gone (or paused). Back to active, the
 * circuit closes and parked deliveries are due at once. `resume` refuses a disabled destination
 * with HOOKINBOX_DESTINATION_DISABLED, so that a 410 is acknowledged on purpose.
 *
 * @example
 * ```ts
 * await changeDestinationState(store, configured, "app", "pause", "deploying", Date.now());
 * ```
 */
export async function changeDestinationState(
  store: Store,
  configured: readonly ConfiguredDestination[],
  name: string,
  action: DestinationAction,
  reason: string | null,
  now: number,
): Promise<DestinationStatus> {
  const current = await destinationStatus(store, configured, name, now);
  if (action === "resume" && current.state === "disabled")
    throw hookinboxError(
      "HOOKINBOX_DESTINATION_DISABLED",
      `${name}: ${current.reason ?? "disabled"}; check the app, then run \`hookinbox destinations enable ${name}\``,
    );
  const next: DestinationState = action === "pause" ? "paused" : "active";
  if (next !== current.state || action === "enable")
    await store.setDestinationState(
      name,
      next,
      action === "pause" ? (reason ?? "paused by an operator") : null,
      now,
    );
  return destinationStatus(store, configured, name, now);
}

/**
 * One configured destination's status; HOOKINBOX_DESTINATION_NOT_FOUND when it is not configured.
 *
 * @example
 * ```ts
 * (await destinationStatus(store, configured, "app", Date.now())).inFlight; // 0
 * ```
 */
export async function destinationStatus(
  store: Store,
  configured: readonly ConfiguredDestination[],
  name: string,
  now: number,
): Promise<DestinationStatus> {
  const destination = configured.find((d) => d.name === name);
  if (!destination) throw unknownDestination(configured, name);
  const [status] = await destinationStatuses(store, [destination], now);
  return status!;
}

/**
 * HOOKINBOX_DESTINATION_NOT_FOUND naming the configured destinations.
 *
 * @example
 * ```ts
 * throw unknownDestination(configured, "ap");
 * ```
 */
export function unknownDestination(configured: readonly ConfiguredDestination[], name: string) {
  return hookinboxError(
    "HOOKINBOX_DESTINATION_NOT_FOUND",
    `"${name}" (destinations: ${configured.map((d) => d.name).join(", ") || "none"})`,
  );
}
