import type { ResolvedAlerts } from "../config/resolve.ts";
import type { Logger } from "../log.ts";
import type { RunOutcome } from "../queue/run-delivery.ts";
import type { DestinationStateRow } from "../store/forward-types.ts";
import type { ClaimedDelivery } from "../store/queue-types.ts";
import type { Store } from "../store/types.ts";
import { type Resolver, systemResolver } from "./address-guard.ts";
import type { BusPublisher } from "./bus/types.ts";
import {
  addCall,
  afterTrial,
  type CallCounts,
  type CallResult,
  type CircuitPolicy,
  circuitPhase,
  noCalls,
  shouldOpen,
  windowStartOf,
} from "./circuit-policy.ts";
import { type DestinationClient, openDestinationClient } from "./http-client.ts";
import type { ResolvedDestination } from "./resolve-destinations.ts";
import { runForward } from "./run-forward.ts";
import type { RouteTransformLookup } from "./transform-request.ts";

/** How long a delivery of a paused or disabled destination is parked before it is looked at again (resume wakes it at once). */
const parkMs = 60_000;

/**
 * How often a process adds the healthy results it counted to the shared breaker counters. A
 * failure is added at once (with the healthy results before it), since it may open the circuit;
 * healthy results only lower the rate, so a success costs no write of its own.
 */
const flushMs = 250;

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
   * circuits (half-open ones let their trials through), over the destination's concurrency
   * (running across every process) or rate window are deferred back to pending, uncounted; the
   * rest are returned to run.
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
  /** The process's publishers of queue destinations, by name (bus/open-bus.ts; closed by their owner). */
  readonly publishers?: ReadonlyMap<string, BusPublisher>;
  /** The route transforms (the config's route table's `transformFor`). */
  readonly routeTransform?: RouteTransformLookup;
}

/**
 * Creates the forwarder: one keep-alive client per HTTP destination (queue destinations use the
 * process's `publishers`), the gate, and the runner.
 *
 * @example
 * ```ts
 * const forwarder = createForwarder({ store, destinations, workerId, logger, now: Date.now, random: Math.random });
 * const admitted = await forwarder.admit(claimed);
 * ```
 */
export function createForwarder(options: ForwarderOptions): Forwarder {
  const { store, destinations, now, random } = options;
  const log = options.logger;
  const resolver = options.resolver ?? systemResolver;
  const clients = new Map<string, DestinationClient>();
  for (const destination of destinations.values()) {
    if (destination.bus) continue;
    clients.set(
      destination.name,
      openDestinationClient(destination.url, {
        connections: destination.concurrency,
        allowPrivateNetworks: destination.allowPrivateNetworks,
        resolver,
      }),
    );
  }
  const publisherOf = (name: string): BusPublisher => {
    const publisher = options.publishers?.get(name);
    if (!publisher) throw new Error(`no publisher for queue destination ${name}`);
    return publisher;
  };
  const leases = Object.fromEntries([...destinations.values()].map((d) => [d.name, d.leaseMs]));
  // The last state read or written per destination: the gate reads the circuit's phase from it.
  const lastState = new Map<string, DestinationStateRow>();
  // Circuit writes by this process, counted as they start and as they end: a states read that
  // overlapped one may be older than what that write returned, and must not overwrite it (a
  // stale "closed" would let a claim through an open circuit).
  let circuitWrites = 0;
  // The trials this process runs: delivery id → the half-open period (its openUntil) it belongs to.
  const trials = new Map<string, number>();
  // Healthy results not yet added to the shared counters, per destination.
  const unflushed = new Map<string, CallCounts>();
  const context = {
    store,
    workerId: options.workerId,
    now,
    random,
    logger: log,
    alerts: options.alerts,
    ...(options.routeTransform ? { routeTransform: options.routeTransform } : {}),
  };

  /** A circuit write (a store error leaves the circuit as it was: null). */
  async function circuitWrite<T>(work: () => Promise<T>): Promise<T | null> {
    circuitWrites++;
    try {
      return await work();
    } catch (error) {
      log.warn({ err: (error as Error).message }, "circuit breaker write failed");
      return null;
    } finally {
      circuitWrites++;
    }
  }

  /** A circuit write returning the new state, which becomes the last state. */
  async function stateWrite(
    work: () => Promise<DestinationStateRow | null>,
  ): Promise<DestinationStateRow | null> {
    const row = await circuitWrite(work);
    if (row) lastState.set(row.name, row);
    return row;
  }

  /** Adds `counts` to the shared counters, then opens a closed circuit the policy says should open. */
  async function record(name: string, policy: CircuitPolicy, counts: CallCounts): Promise<void> {
    const at = now();
    const row = await stateWrite(() =>
      store.recordCalls(name, counts, windowStartOf(at, policy.windowMs), policy.windowMs),
    );
    if (!row || circuitPhase(row.openUntil, at) !== "closed") return;
    const why = shouldOpen({ downInRow: row.failures, window: row.window }, at, policy);
    if (!why) return;
    const opened = await stateWrite(() => store.openCircuit(name, at + policy.cooldownMs, null));
    if (opened)
      log.warn(
        {
          target: name,
          reason: why,
          downInRow: row.failures,
          window: row.window,
          openUntil: opened.openUntil,
        },
        why === "down"
          ? "circuit opened: the destination is down (connect, timeout, reset or DNS failures in a row); attempts wait for the cool-down, then its trials"
          : "circuit opened: most attempts in the window failed; attempts wait for the cool-down, then its trials",
      );
  }

  /** Counts one attempt's result: a failure at once, a healthy result with the next write. */
  async function count(name: string, policy: CircuitPolicy, call: CallResult): Promise<void> {
    const counts = addCall(unflushed.get(name) ?? noCalls, call);
    if (call === "healthy") {
      unflushed.set(name, counts);
      return;
    }
    unflushed.delete(name);
    await record(name, policy, counts);
  }

  async function flush(): Promise<void> {
    const batches = [...unflushed];
    unflushed.clear();
    await Promise.all(
      batches.map(([name, counts]) => {
        const policy = destinations.get(name)?.circuitBreaker;
        return policy ? record(name, policy, counts) : undefined;
      }),
    );
  }
  const breakers = [...destinations.values()].some((d) => d.circuitBreaker !== null);
  const flushing = breakers ? setInterval(() => void flush(), flushMs) : undefined;
  flushing?.unref();

  /** The result of a trial of the half-open period `openUntil`: close, reopen, or wait for the others. */
  async function settleTrial(
    name: string,
    policy: CircuitPolicy,
    openUntil: number,
    call: CallResult | null,
  ): Promise<void> {
    if (call === null) {
      // Nothing was learned (nothing sent, or aborted here): the slot goes to another delivery.
      await stateWrite(() => store.endTrial(name, openUntil, false));
      return;
    }
    const row =
      call === "healthy" ? await stateWrite(() => store.endTrial(name, openUntil, true)) : null;
    if (call === "healthy" && !row) return; // the period is over (closed or reopened elsewhere)
    const next = afterTrial(call, row?.trials ?? { taken: 0, passed: 0 }, policy);
    const at = now();
    if (next.action === "reopen") {
      const reopened = await stateWrite(() =>
        store.openCircuit(name, at + policy.cooldownMs, openUntil),
      );
      if (reopened)
        log.warn(
          { target: name, result: call, openUntil: reopened.openUntil },
          "circuit reopened: a trial failed",
        );
    } else if (next.action === "close") {
      const woken = await circuitWrite(() => store.closeCircuit(name, openUntil, at));
      if (woken !== null) {
        const known = lastState.get(name);
        if (known)
          lastState.set(name, {
            ...known,
            failures: 0,
            openUntil: null,
            window: { start: 0, calls: 0, failures: 0, prevCalls: 0, prevFailures: 0 },
            trials: { taken: 0, passed: 0, until: null },
          });
        log.info(
          { target: name, trials: policy.trials, woken },
          "circuit closed: its trials passed; postponed deliveries and retries after down failures are due now",
        );
      }
    } else if (next.wake > 0) {
      await circuitWrite(() => store.wakeCircuitWaiting(name, at, next.wake));
    }
  }

  async function admitGroup(
    destination: ResolvedDestination,
    group: ClaimedDelivery[],
    state: DestinationStateRow | undefined,
    running: number,
    defer: (ids: string[], runAt: number, circuit?: boolean) => void,
  ): Promise<ClaimedDelivery[]> {
    const at = now();
    const name = destination.name;
    const ids = (list: readonly ClaimedDelivery[]) => list.map((d) => d.id);
    if (state && state.state !== "active") {
      defer(ids(group), at + parkMs);
      return [];
    }
    let admitted = group;
    const policy = destination.circuitBreaker;
    const openUntil = state?.openUntil ?? null;
    let trialOf: number | null = null;
    if (policy && openUntil !== null) {
      if (circuitPhase(openUntil, at) === "open") {
        defer(ids(group), openUntil, true);
        return [];
      }
      // Half-open: `trials` across every process, taken one at a time; the rest wait.
      let taken = 0;
      let current: number | null = openUntil;
      while (taken < Math.min(group.length, policy.trials)) {
        const trial = await circuitWrite(() =>
          store.takeTrial(name, openUntil, at, policy.trials, at + destination.leaseMs),
        );
        // A failed write learns nothing: the circuit is taken to be as it was.
        current = trial ? trial.openUntil : openUntil;
        if (!trial?.taken) break;
        taken++;
      }
      if (taken === 0 && current !== null && current > at) {
        // Reopened meanwhile.
        defer(ids(group), current, true);
        return [];
      }
      if (taken > 0 || current !== null) {
        admitted = group.slice(0, taken);
        defer(ids(group.slice(taken)), at + policy.cooldownMs, true);
        trialOf = openUntil;
        for (const delivery of admitted) trials.set(delivery.id, openUntil);
      }
      // else: closed meanwhile, every delivery goes on.
    }
    // A trial cut by the limits below gives its slot back.
    const cut = async (list: readonly ClaimedDelivery[]) => {
      if (trialOf === null || !policy) return;
      for (const delivery of list) {
        if (!trials.delete(delivery.id)) continue;
        const period = trialOf;
        await stateWrite(() => store.endTrial(name, period, false));
      }
    };
    // Running counts this claim's deliveries too: keep only what fits under the cap.
    const room = Math.max(0, destination.concurrency - (running - group.length));
    if (admitted.length > room) {
      defer(ids(admitted.slice(room)), at + 50 + Math.floor(random() * 200));
      await cut(admitted.slice(room));
      admitted = admitted.slice(0, room);
    }
    const rate = destination.rateLimit;
    if (rate && admitted.length > 0) {
      const windowStart = Math.floor(at / rate.perMs) * rate.perMs;
      const kept: ClaimedDelivery[] = [];
      for (const delivery of admitted) {
        if (await store.takeRateSlot(name, windowStart, rate.max)) kept.push(delivery);
        else {
          defer(ids(admitted.slice(kept.length)), windowStart + rate.perMs);
          await cut(admitted.slice(kept.length));
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
      // Deferrals by time and by whether the circuit postponed them (marked for its closing).
      const deferred = new Map<string, { runAt: number; circuit: boolean; ids: string[] }>();
      const defer = (list: string[], runAt: number, circuit = false) => {
        if (list.length === 0) return;
        const at = Math.floor(runAt);
        const key = `${at}:${circuit}`;
        const entry = deferred.get(key) ?? { runAt: at, circuit, ids: [] };
        entry.ids.push(...list);
        deferred.set(key, entry);
      };
      const admitted = [...others];
      for (const [name, group] of groups) {
        const destination = destinations.get(name)!;
        admitted.push(
          ...(await admitGroup(destination, group, lastState.get(name), running[name] ?? 0, defer)),
        );
      }
      for (const { runAt, circuit, ids } of deferred.values())
        await store.deferDeliveries(options.workerId, ids, runAt, now(), circuit);
      return admitted;
    },
    async run(delivery, signal) {
      const destination = destinations.get(delivery.target)!;
      const policy = destination.circuitBreaker;
      const trialOf = trials.get(delivery.id);
      trials.delete(delivery.id);
      // The breaker hears the answer before the delivery ends (and frees its slot); or after,
      // when nothing was sent or the lease was lost.
      let heard = false;
      const hear = async (call: CallResult | null) => {
        heard = true;
        if (!policy) return;
        if (trialOf !== undefined) await settleTrial(destination.name, policy, trialOf, call);
        else if (call !== null) await count(destination.name, policy, call);
      };
      const { outcome, call } = await runForward(
        context,
        destination,
        clients.get(destination.name) ?? publisherOf(destination.name),
        delivery,
        signal,
        hear,
      );
      if (!heard) await hear(call);
      return outcome;
    },
    async close() {
      clearInterval(flushing);
      await flush().catch(() => undefined);
      await Promise.all([...clients.values()].map((c) => c.close()));
    },
  };
}
