import { z } from "zod";
import {
  changeDestinationState,
  type DestinationAction,
  destinationStatus,
  destinationStatuses,
  unknownDestination,
} from "../forward/destination-admin.ts";
import { cursorField, deliveryStatuses, limitField, oneOf, text } from "./fields.ts";
import { defineOperation } from "./operation.ts";

const name = text("destination name");

/**
 * Each configured destination's state (active, paused, disabled by a 410), circuit and queue.
 *
 * @example
 * ```ts
 * const { items } = await listDestinations.run(ctx, {});
 * ```
 */
export const listDestinations = defineOperation({
  name: "destinations.list",
  summary: "forwarding destinations: state, circuit, in flight, pending, dead",
  readOnly: true,
  input: z.strictObject({}),
  run: async (ctx) => ({
    items: await destinationStatuses(ctx.store, ctx.destinations, ctx.now()),
  }),
});

/**
 * One destination's state, circuit and queue.
 *
 * @example
 * ```ts
 * const app = await showDestination.run(ctx, { name: "app" });
 * ```
 */
export const showDestination = defineOperation({
  name: "destinations.show",
  summary: "one destination: state, circuit, in flight, pending, dead",
  readOnly: true,
  input: z.strictObject({ name }),
  run: (ctx, input) => destinationStatus(ctx.store, ctx.destinations, input.name, ctx.now()),
});

function stateChange(action: DestinationAction, summary: string) {
  return defineOperation({
    name: `destinations.${action}`,
    summary,
    readOnly: false,
    input: z.strictObject({
      name,
      ...(action === "pause"
        ? {
            reason: z
              .string({ error: "must be a string" })
              .optional()
              .describe("why, shown in lists"),
          }
        : {}),
    }),
    run: (ctx, input: { name: string; reason?: string | undefined }) =>
      changeDestinationState(
        ctx.store,
        ctx.destinations,
        input.name,
        action,
        input.reason ?? null,
        ctx.now(),
      ),
  });
}

/** Holds a destination's deliveries (nothing fails) until it is resumed. */
export const pauseDestination = stateChange("pause", "hold a destination's deliveries");
/** Releases a paused destination's deliveries. */
export const resumeDestination = stateChange("resume", "release a paused destination");
/** Brings back a destination disabled by a 410 Gone. */
export const enableDestination = stateChange(
  "enable",
  "bring back a destination disabled by a 410",
);

/**
 * A destination's deliveries, newest first.
 *
 * @example
 * ```ts
 * const page = await destinationDeliveries.run(ctx, { name: "app", status: "dead" });
 * ```
 */
export const destinationDeliveries = defineOperation({
  name: "destinations.deliveries",
  summary: "a destination's deliveries, newest first",
  readOnly: true,
  input: z.strictObject({
    name,
    status: oneOf(deliveryStatuses).optional(),
    limit: limitField.optional(),
    cursor: cursorField.optional(),
  }),
  run: async (ctx, { name: target, ...query }) => {
    if (!ctx.destinations.some((d) => d.name === target))
      throw unknownDestination(ctx.destinations, target);
    return ctx.store.listDeliveries({ ...query, target });
  },
});
