import { z } from "zod";
import { durationField, limitField } from "./fields.ts";
import { defineOperation } from "./operation.ts";

/**
 * What needs a human: expired leases nobody rescues, abandoned handlers, ordering keys blocked
 * by a dead delivery, held effects, and events older than `olderThan` still not done. `stuck`
 * says whether anything is.
 *
 * @example
 * ```ts
 * const report = await runOperation(stuckWork, ctx, { olderThan: "30m" }, "HOOKINBOX_USAGE");
 * if (report.stuck) process.exitCode = 1;
 * ```
 */
export const stuckWork = defineOperation({
  name: "stuck",
  summary:
    "what needs a human: expired leases, abandoned handlers, blocked keys, held effects, old undone events",
  readOnly: true,
  input: z.strictObject({
    olderThan: durationField.prefault("1h").describe("events older than this and not done count"),
    limit: limitField.default(50),
  }),
  run: async (ctx, { olderThan, limit }) => {
    const report = await ctx.store.stuck({ now: ctx.now(), olderThanMs: olderThan, limit });
    const stuck =
      report.expiredLeases.length +
        report.abandoned.length +
        report.blockedKeys.length +
        report.heldEffects.length +
        report.oldUndone.length >
      0;
    return { stuck, ...report };
  },
});
