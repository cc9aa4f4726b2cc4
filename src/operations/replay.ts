import { z } from "zod";
import { unknownDestination } from "../forward/destination-admin.ts";
import { allField, checkBulkScope, dryRunField } from "./bulk-scope.ts";
import { eventStatuses, oneOf, targetsField, text, timeField } from "./fields.ts";
import { defineOperation, type OperationContext } from "./operation.ts";
import { planReplayMatching, replayMatching, replayStoredEvent } from "./replay-policy.ts";

/** Names of configured destinations, each checked; an unknown one is HOOKINBOX_DESTINATION_NOT_FOUND. */
function destinationTargets(ctx: OperationContext, names: readonly string[]): string[] {
  for (const name of names)
    if (!ctx.destinations.some((d) => d.name === name))
      throw unknownDestination(ctx.destinations, name);
  return [...names];
}

const destinationField = z
  .union([text("destination name"), z.array(text("destination name"))], {
    error: "must be a destination name or an array of them",
  })
  .transform((value) => (typeof value === "string" ? [value] : value))
  .describe("configured destinations to deliver to (same webhook-id as the original)");

/** `targets` and `destination` together, or undefined for "route as before". */
function chosenTargets(
  ctx: OperationContext,
  input: { targets?: string[] | undefined; destination?: string[] | undefined },
): string[] | undefined {
  if (input.targets === undefined && input.destination === undefined) return undefined;
  return [...(input.targets ?? []), ...destinationTargets(ctx, input.destination ?? [])];
}

/**
 * Re-delivers one stored event as new deliveries flagged `isReplay`; the originals and their
 * attempt logs stay as they are. Without targets it goes to the handlers it was delivered to
 * before (or, if none, to those its source and type route to now).
 *
 * @example
 * ```ts
 * const { deliveries } = await replayEvent.run(ctx, { id: "evt_01J…", destination: ["app"] });
 * ```
 */
export const replayEvent = defineOperation({
  name: "events.replay",
  summary: "re-deliver one event (new deliveries flagged replay)",
  readOnly: false,
  input: z.strictObject({
    id: text("event id"),
    targets: targetsField.optional(),
    destination: destinationField.optional(),
  }),
  run: async (ctx, input) => {
    const targets = chosenTargets(ctx, input);
    const deliveries = await replayStoredEvent(ctx, input.id, targets ? { targets } : {});
    return { deliveries };
  },
});

/** The filter fields of a bulk replay (an empty filter needs `all: true`). */
const replayFilters = ["source", "type", "status", "receivedFrom", "receivedTo"] as const;

/**
 * Replays every event matching a filter (`receivedFrom` inclusive, `receivedTo` exclusive, on
 * the time the event was first received), in bounded batches, reporting progress. No filter
 * needs `all: true` (HOOKINBOX_BULK_UNSCOPED), `all` beside a filter is refused
 * (HOOKINBOX_BULK_SCOPE_CONFLICT); `dryRun: true` answers how many events and deliveries, per
 * target, it would create, and creates none.
 *
 * @example
 * ```ts
 * const { events, deliveries } = await replayWhere.run(ctx, { source: "stripe", status: "dead" });
 * const plan = await replayWhere.run(ctx, { all: true, dryRun: true }); // { dryRun: true, targets, … }
 * ```
 */
export const replayWhere = defineOperation({
  name: "replays.create",
  summary: "replay every event matching a filter",
  readOnly: false,
  input: z.strictObject({
    source: text("source name").optional(),
    type: text("event type").optional(),
    status: oneOf(eventStatuses).optional(),
    receivedFrom: timeField.optional(),
    receivedTo: timeField.optional(),
    all: allField,
    targets: targetsField.optional(),
    destination: destinationField.optional(),
    dryRun: dryRunField,
  }),
  check: (input) => checkBulkScope(input, replayFilters),
  run: async (ctx, { targets: _t, destination: _d, all: _all, dryRun, ...filter }) => {
    const targets = chosenTargets(ctx, { targets: _t, destination: _d });
    if (dryRun) return planReplayMatching(ctx, filter, targets ? { targets } : {});
    const progress = ctx.onProgress;
    const total = progress ? await ctx.store.countEvents(filter) : 0;
    return replayMatching(ctx, filter, {
      ...(targets ? { targets } : {}),
      ...(progress ? { onProgress: (done: number) => progress(done, total) } : {}),
    });
  },
});
