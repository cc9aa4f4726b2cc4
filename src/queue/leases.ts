import type { ResolvedHandler } from "../handlers/routes.ts";
import type { Logger } from "../log.ts";
import type { QueueStore } from "../store/queue-types.ts";
import type { InFlight } from "./in-flight.ts";
import type { WorkerMetrics } from "./worker-metrics.ts";

/**
 * Every lease a worker takes. A delivery's lease is its target's own (a handler's `lease`, a
 * destination's timeout + 10 s), else the worker's default; the claim records it per delivery
 * (`lease_expires_at = now + that lease`), so a rescue after a crash waits for that delivery's
 * own lease, whatever other targets need.
 */
export interface LeasePlan {
  readonly defaultMs: number;
  /** Targets whose lease is set on their own (passed with every claim). */
  readonly targetLeaseMs: Readonly<Record<string, number>>;
  /** Heartbeat period: a third of the shortest lease, so every lease is renewed in time. */
  readonly heartbeatMs: number;
  /** Rescue period: half the shortest lease, so a crashed worker's shortest lease is found soon. */
  readonly rescueEveryMs: number;
  of(target: string): number;
}

/**
 * Plans the leases of a worker from its default, its handlers and its destinations.
 *
 * @example
 * ```ts
 * const plan = leasePlan(600_000, handlers, forwarder?.leases);
 * plan.of("std:*"); // the handler's own lease, e.g. 2_000
 * ```
 */
export function leasePlan(
  defaultMs: number,
  handlers: ReadonlyMap<string, ResolvedHandler>,
  destinations: Readonly<Record<string, number>> = {},
): LeasePlan {
  const targetLeaseMs: Record<string, number> = { ...destinations };
  for (const handler of handlers.values())
    if (handler.leaseMs !== defaultMs) targetLeaseMs[handler.target] = handler.leaseMs;
  const shortest = Math.min(defaultMs, ...Object.values(targetLeaseMs));
  return {
    defaultMs,
    targetLeaseMs,
    heartbeatMs: Math.max(50, Math.floor(shortest / 3)),
    rescueEveryMs: Math.max(100, Math.floor(shortest / 2)),
    of: (target) => targetLeaseMs[target] ?? defaultMs,
  };
}

/** What lease keeping needs from the worker. */
export interface LeaseKeepingOptions {
  readonly store: QueueStore;
  readonly workerId: string;
  readonly plan: LeasePlan;
  readonly inFlight: InFlight;
  /** Deliveries held but not running: claimed and not started yet, or whose "done" is being recorded. */
  readonly alsoHeld?: readonly InFlight[];
  readonly now: () => number;
  readonly log: Logger;
  readonly metrics?: WorkerMetrics;
  /** Called when a rescue returned deliveries to pending (there is work to claim). */
  readonly onRescued: () => void;
  /**
   * Whether to sweep for expired leases (at start and every `rescueEveryMs`; default true). A
   * bounded call (`processAvailable`) keeps only its own leases and leaves the sweep out.
   */
  readonly rescue?: boolean;
}

/**
 * Keeps leases: a heartbeat extends each running (and queued) delivery by its own lease (one
 * statement per lease length) and aborts the signal of one the worker no longer holds (a running
 * handler's; a queued delivery's, so it is never started; a finishing one's, harmlessly); a rescue sweep returns
 * deliveries whose lease expired (a crashed worker anywhere) to pending, once at start and then
 * every `rescueEveryMs`.
 *
 * @example
 * ```ts
 * const keeping = keepLeases({ store, workerId, plan, inFlight, now, log, onRescued: () => loop.wake() });
 * keeping.stop();
 * ```
 */
export function keepLeases(options: LeaseKeepingOptions): { stop(): void } {
  const { store, workerId, plan, inFlight, now, log, metrics } = options;
  const held = [inFlight, ...(options.alsoHeld ?? [])];

  const heartbeat = async () => {
    const byLease = new Map<number, string[]>();
    for (const entries of held)
      for (const { delivery, leaseMs } of entries.values())
        byLease.set(leaseMs, [...(byLease.get(leaseMs) ?? []), delivery.id]);
    for (const [leaseMs, ids] of byLease) {
      const kept = new Set(await store.extendLeases(workerId, ids, now() + leaseMs));
      for (const lost of ids) {
        const entry = held.map((entries) => entries.get(lost)).find((e) => e !== undefined);
        if (entry && !kept.has(lost)) {
          log.warn({ deliveryId: lost }, "lease lost; aborting the handler's signal");
          entry.abort.abort(new Error("lease lost"));
        }
      }
    }
  };
  const heartbeatTimer = setInterval(() => {
    if (held.every((entries) => entries.size === 0)) return;
    heartbeat().catch((error: unknown) => {
      metrics?.storeError("heartbeat");
      log.error({ err: (error as Error).message }, "lease heartbeat failed");
    });
  }, plan.heartbeatMs);
  heartbeatTimer.unref?.();

  const rescue = () =>
    store
      .rescueExpiredLeases(now())
      .then((rescued) => {
        if (rescued === 0) return;
        metrics?.leasesRescued(rescued);
        log.warn({ rescued }, "rescued deliveries whose lease expired");
        options.onRescued();
      })
      .catch((error: unknown) => {
        metrics?.storeError("rescue");
        log.error({ err: (error as Error).message }, "lease rescue failed");
      });
  let rescueTimer: NodeJS.Timeout | undefined;
  if (options.rescue !== false) {
    void rescue();
    rescueTimer = setInterval(() => void rescue(), plan.rescueEveryMs);
    rescueTimer.unref?.();
  }

  return {
    stop() {
      clearInterval(heartbeatTimer);
      clearInterval(rescueTimer);
    },
  };
}
