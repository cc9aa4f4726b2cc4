import { z } from "zod";
import { defineOperation } from "./operation.ts";

/**
 * Every configured runbook, in configured order.
 *
 * @example
 * ```ts
 * const { items } = await listRunbooks.run(ctx, {});
 * ```
 */
export const listRunbooks = defineOperation({
  name: "runbooks.list",
  summary: "configured runbooks: owner, safe to reprocess, notes, link",
  readOnly: true,
  input: z.strictObject({}),
  run: async (ctx) => ({ items: ctx.runbooks.all }),
});
