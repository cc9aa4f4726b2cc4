import type { ResolvedAlerts } from "../config/resolve.ts";
import type { Logger } from "../log.ts";
import type { RunOutcome } from "../queue/run-delivery.ts";
import type { DestinationStateRow } from "../store/forward-types.ts";
import type { ClaimedDelivery } from "../store/queue-types.ts";
import type { Store } from "../store/types.ts";
import { type Resolver, systemResolver } from "./address-guard.ts";
import { type DestinationClient, openDestinationClient } from "./http-client.ts";
import type { ResolvedDestination } from "./resolve-destinations.ts";
import { runForward } from "./run-forward.ts";

/** How long a delivery of a paused or disabled destination is parked before it is looked at again (resume wakes it at once). */
const parkMs = 60_000;

/**
 * Runs destination targets for a worker: the flow-control gate over each claim, and the forward
 * of each admitted delivery. The worker stays target-agnostic: it asks `has(target)`.
 */
export interface Forwarder {
  has(target: string): boolean;
  /** The lease a destination's forward takes (its timeout plus room), by destination target. */
  readonly leases: Readonly<Record<string, number>>;
  /**
   * Flow control over claimed deliveries: those of paused or disabled destinations, of open
   * circuits (but one probe), over the destination's concurrency (running across every process)
   * or rate window are deferred back to pending, uncounted; the rest are returned to run.
   */
  admit(claimed: readonly ClaimedDelivery[]): Promise<ClaimedDelivery[]>;
  run(delivery: ClaimedDelivery, signal: AbortSignal): Promise<RunOutcome>;
  close(): Promise<void>;
}

/** What a forwarder needs. */
export interface ForwarderOptions {
  readonly store: Store;
  readonly destinations: ReadonlyMap<string, ResolvedDestination>;
  readonly workerId: string;
  readonly logger: Logger;
  readonly alerts?: ResolvedAlerts;
  readonly now: () => number;
  readonly random: () => number;
  /** Host name resolution for destinations (tests pass their own; the guard checks its answers). */
  readonly resolver?: Resolver;
}

/**
 * Creates the forwarder: one keep-alive client per destination, the gate, and the runner.
 *
 * @example
 * ```ts
 * const forwarder = createForwarder({ store, destinations, workerId, logger, now: Date.now, random: Math.random });
 * const admitted = await forwarder.admit(claimed);
 * ```
 */
export function createForwarder(options: ForwarderOptions): Forwarder {
  const { store, destinations, now, random } = options;
  const resolver = options.resolver ?? systemResolver;
  const clients = new Map<string, DestinationClient>();
  for (const destination of destinations.values()) {
    clients.set(
      destination.name,
      openDestinationClient(destination.url, {
        connections: destination.concurrency,
        allowPrivateNetworks: destination.allowPrivateNetworks,
        resolver,
      }),
    );
  }
  const leases = Object.fromEntries([...destinations.values()].map((d) => [d.name, d.leaseMs]));
  // The last state read per destination: success skips the circuit write when nothing failed.
  const lastState = new Map<string, DestinationStateRow>();
  // Circuit writes by this process, counted as they start and as they end: a states read that
  // overlapped one may be older than what that write returned, and must not overwrite it (a stale "no failures" would let the
  // next success skip its reset, and failures with successes between them open the circuit).
  let circuitWrites = 0;
  const context = {
    store,
    workerId: options.workerId,
    now,
    random,
    logger: options.logger,
    alerts: options.alerts,
  };

  async function admitGroup(
    destination: ResolvedDestination,
    group: ClaimedDelivery[],
    state: DestinationStateRow | undefined,
    running: number,
    defer: (ids: string[], runAt: number) => void,
  ): Promise<ClaimedDelivery[]> {
    const at = now();
    const ids = (list: readonly ClaimedDelivery[]) => list.map((d) => d.id);
    if (state && state.state !== "active") {
      defer(ids(group), at + parkMs);
      return [];
    }
    let admitted = group;
    const breaker = destination.circuitBreaker;
    const openUntil = state?.openUntil ?? null;
    if (breaker && openUntil !== null) {
      if (openUntil > at) {
        defer(ids(group), openUntil);
        return [];
      }
      // Cool-down over: one probe across every process; the rest wait for its result.
      const probe = await store.takeProbe(destination.name, at, breaker.cooldownMs);
      admitted = probe ? group.slice(0, 1) : [];
      defer(ids(group.slice(admitted.length)), at + breaker.cooldownMs);
    }
    // Running counts this claim's deliveries too: keep only what fits under the cap.
    const room = Math.max(0, destination.concurrency - (running - group.length));
    if (admitted.length > room) {
      defer(ids(admitted.slice(room)), at + 50 + Math.floor(random() * 200));
      admitted = admitted.slice(0, room);
    }
    const rate = destination.rateLimit;
    if (rate && admitted.length > 0) {
      const windowStart = Math.floor(at / rate.perMs) * rate.perMs;
      const kept: ClaimedDelivery[] = [];
      for (const delivery of admitted) {
        if (await store.takeRateSlot(destination.name, windowStart, rate.max)) kept.push(delivery);
        else {
          defer(ids(admitted.slice(kept.length)), windowStart + rate.perMs);
          break;
        }
      }
      admitted = kept;
    }
    return admitted;
  }

  return {
    has: (target) => destinations.has(target),
    leases,
    async admit(claimed) {
      const groups = new Map<string, ClaimedDelivery[]>();
      const others: ClaimedDelivery[] = [];
      for (const delivery of claimed) {
        if (!destinations.has(delivery.target)) {
          others.push(delivery);
          continue;
        }
        const group = groups.get(delivery.target) ?? [];
        group.push(delivery);
        groups.set(delivery.target, group);
      }
      if (groups.size === 0) return others;
      const writesBefore = circuitWrites;
      const [states, running] = await Promise.all([
        store.listDestinationStates(),
        store.countRunning([...groups.keys()]),
      ]);
      if (circuitWrites === writesBefore)
        for (const state of states) lastState.set(state.name, state);
      const deferred = new Map<number, string[]>();
      const defer = (list: string[], runAt: number) => {
        if (list.length === 0) return;
        const at = Math.floor(runAt);
        deferred.set(at, [...(deferred.get(at) ?? []), ...list]);
      };
      const admitted = [...others];
      for (const [name, group] of groups) {
        const destination = destinations.get(name)!;
        admitted.push(
          ...(await admitGroup(destination, group, lastState.get(name), running[name] ?? 0, defer)),
        );
      }
      for (const [runAt, list] of deferred)
        await store.deferDeliveries(options.workerId, list, runAt, now());
      return admitted;
    },
    async run(delivery, signal) {
      const destination = destinations.get(delivery.target)!;
      const { outcome, ok } = await runForward(
        context,
        destination,
        clients.get(destination.name)!,
        delivery,
        signal,
      );
      const breaker = destination.circuitBreaker;
      const known = lastState.get(destination.name);
      const clean = known !== undefined && known.failures === 0 && known.openUntil === null;
      if (breaker && ok !== null && !(ok && clean)) {
        circuitWrites++;
        const state = await store
          .recordCircuit(destination.name, ok, now(), breaker.failures, breaker.cooldownMs)
          .catch(() => null);
        circuitWrites++;
        if (state) {
          lastState.set(destination.name, state);
          if (!ok && state.openUntil !== null && state.failures === breaker.failures)
            options.logger.warn(
              { target: destination.name, failures: state.failures, openUntil: state.openUntil },
              "circuit opened: attempts to this destination pause until a probe succeeds",
            );
        }
      }
      return outcome;
    },
    async close() {
      await Promise.all([...clients.values()].map((c) => c.close()));
    },
  };
}
