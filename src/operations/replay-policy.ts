import { hookinboxError } from "../errors.ts";
import type { DeliveryView, ReplayFilter } from "../store/queue-types.ts";
import { type BulkPlan, bulkPlan } from "./bulk-scope.ts";
import type { OperationContext, ReplayRouting } from "./operation.ts";

/** The replays an inbox offers (`inbox.replay`, …); the functions below implement them. */
export interface Replayer {
  /** Re-delivers a stored event: new deliveries flagged `isReplay`; the originals stay as they are. */
  replay(eventId: string, options?: { targets?: readonly string[] }): Promise<DeliveryView[]>;
  /** Replays every event matching a filter, in bounded batches. */
  replayWhere(
    filter: ReplayFilter,
    options?: { targets?: readonly string[]; onProgress?: (eventsDone: number) => void },
  ): Promise<{ events: number; deliveries: number }>;
  /** What `replayWhere` would create (events, deliveries per target), counted in SQL; changes nothing. */
  planReplayWhere(
    filter: ReplayFilter,
    options?: { targets?: readonly string[] },
  ): Promise<BulkPlan>;
}

const empty = new Uint8Array(0);

function routingOf(ctx: OperationContext): ReplayRouting {
  // A surface that offers replay builds its context from the config's routes; reaching here is a bug.
  if (!ctx.routing) throw new Error("replay needs an inbox with the configured handlers");
  return ctx.routing;
}

/** Each target must be a configured handler or destination (HOOKINBOX_UNKNOWN_TARGET). */
function checkTargets(routing: ReplayRouting, targets: readonly string[]): void {
  for (const target of targets) {
    if (!routing.handlers.includes(target) && !routing.destinations.includes(target)) {
      throw hookinboxError(
        "HOOKINBOX_UNKNOWN_TARGET",
        `"${target}" (handlers: ${routing.handlers.join(", ") || "none"}; destinations: ${routing.destinations.join(", ") || "none"})`,
      );
    }
  }
}

/**
 * Re-delivers one stored event as new deliveries flagged `isReplay`. Without targets it goes to
 * the configured targets it was delivered to before (or, if none, to those it routes to now).
 *
 * @example
 * ```ts
 * const deliveries = await replayStoredEvent(inbox.operations, "evt_01J…");
 * ```
 */
export async function replayStoredEvent(
  ctx: OperationContext,
  eventId: string,
  options: { targets?: readonly string[] } = {},
): Promise<DeliveryView[]> {
  const routing = routingOf(ctx);
  let targets = options.targets;
  if (targets === undefined) {
    const event = await ctx.store.getEvent(eventId);
    if (!event) throw hookinboxError("HOOKINBOX_EVENT_NOT_FOUND", eventId);
    const previous = [...new Set(event.deliveries.map((d) => d.target))].filter(
      (t) => routing.handlers.includes(t) || routing.destinations.includes(t),
    );
    targets = previous.length > 0 ? previous : routing.route(event.source, event.type, event.body);
  }
  checkTargets(routing, targets);
  const created = await ctx.store.replayEvent({ eventId, targets, now: ctx.now() });
  ctx.wake?.();
  return created;
}

/**
 * Replays every event matching a filter, in bounded batches, each to `targets` or to what its
 * source and type route to (a route with `where` needs explicit targets).
 *
 * @example
 * ```ts
 * const { events } = await replayMatching(inbox.operations, { source: "stripe", status: "dead" });
 * ```
 */
export async function replayMatching(
  ctx: OperationContext,
  filter: ReplayFilter,
  options: { targets?: readonly string[]; onProgress?: (eventsDone: number) => void } = {},
): Promise<{ events: number; deliveries: number }> {
  const routing = routingOf(ctx);
  if (options.targets) checkTargets(routing, options.targets);
  const fixed = options.targets;
  const result = await ctx.store.replayWhere(filter, {
    now: ctx.now(),
    targetsFor: (event) => fixed ?? routing.route(event.source, event.type, empty),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  ctx.wake?.();
  return result;
}

/**
 * What `replayMatching` would create (events, deliveries per target), counted in the store;
 * changes nothing.
 *
 * @example
 * ```ts
 * const plan = await planReplayMatching(inbox.operations, { type: "invoice.paid" });
 * ```
 */
export async function planReplayMatching(
  ctx: OperationContext,
  filter: ReplayFilter,
  options: { targets?: readonly string[] } = {},
): Promise<BulkPlan> {
  const routing = routingOf(ctx);
  if (options.targets) checkTargets(routing, options.targets);
  const fixed = options.targets;
  // Routing reads source and type only, so each (source, type) group is routed once.
  const kinds = await ctx.store.countEventKinds(filter);
  return bulkPlan(
    kinds.reduce((sum, k) => sum + k.events, 0),
    kinds.flatMap((k) =>
      (fixed ?? routing.route(k.source, k.type, empty)).map((target) => ({
        target,
        deliveries: k.events,
      })),
    ),
  );
}
