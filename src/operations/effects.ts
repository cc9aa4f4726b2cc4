import { z } from "zod";
import { hookinboxError } from "../errors.ts";
import { effectStatuses, oneOf, text } from "./fields.ts";
import { defineOperation } from "./operation.ts";

/**
 * The effect ledger, filtered by status and event.
 *
 * @example
 * ```ts
 * const { items } = await listEffects.run(ctx, { status: "held" });
 * ```
 */
export const listEffects = defineOperation({
  name: "effects.list",
  summary: "effects in the ledger (held ones wait for a human)",
  readOnly: true,
  input: z.strictObject({
    status: oneOf(effectStatuses).optional(),
    eventId: text("event id").optional(),
  }),
  run: async (ctx, input) => ({ items: await ctx.store.listEffects(input) }),
});

/**
 * Settles an effect held for a human: `done` (it happened; later runs get `result` back) or
 * `release` (it did not: the next run calls it again). The effect comes back with
 * `deadDeliveries`: the dead deliveries of its event and target, which need a retry to run the
 * handler again.
 *
 * @example
 * ```ts
 * const { status, deadDeliveries } = await resolveEffect.run(ctx, { id, resolution: "done" });
 * ```
 */
export const resolveEffect = defineOperation({
  name: "effects.resolve",
  summary: "settle a held effect: done (it happened) or release (run it again)",
  readOnly: false,
  input: z.strictObject({
    id: text("effect id"),
    resolution: z.enum(["done", "release"], {
      error: 'must be "done" (it happened) or "release" (run it again)',
    }),
    result: z.unknown().optional().describe("what later runs get back (with done)"),
  }),
  run: async (ctx, { id, resolution, result }) => {
    const effect = await ctx.store.resolveEffect(id, resolution, ctx.now(), result);
    if (!effect) throw hookinboxError("HOOKINBOX_EFFECT_NOT_FOUND", id);
    const dead = await ctx.store.listDeliveries({
      eventId: effect.eventId,
      status: "dead",
      limit: 500,
    });
    return {
      ...effect,
      deadDeliveries: dead.items.filter((d) => d.target === effect.target).map((d) => d.id),
    };
  },
});
