import { z } from "zod";
import { hookinboxError } from "../errors.ts";
import type { DeliveryView } from "../store/queue-types.ts";
import { allField, checkBulkScope, dryRunField, retryPlan } from "./bulk-scope.ts";
import { withRunbook } from "./events.ts";
import { cursorField, deliveryStatuses, limitField, oneOf, text } from "./fields.ts";
import { defineOperation, type OperationContext } from "./operation.ts";
import {
  type BulkRetryResult,
  checkSafeToReprocess,
  retryDeliveries as runNow,
} from "./retry-deliveries.ts";

/**
 * Deliveries, newest first, filtered by status, target and event, each with its runbook.
 *
 * @example
 * ```ts
 * const page = await runOperation(listDeliveries, ctx, { status: "dead" }, "HOOKINBOX_USAGE");
 * ```
 */
export const listDeliveries = defineOperation({
  name: "deliveries.list",
  summary: "deliveries, newest first, each with the runbook of its event type",
  readOnly: true,
  input: z.strictObject({
    status: oneOf(deliveryStatuses).optional(),
    target: text("handler or destination name").optional(),
    eventId: text("event id").optional(),
    limit: limitField.optional(),
    cursor: cursorField.optional(),
  }),
  run: async (ctx, input) => {
    const page = await ctx.store.listDeliveries(input);
    return { ...page, items: page.items.map((d) => withRunbook(d, ctx.runbooks)) };
  },
});

/**
 * Dead letters: dead deliveries, newest first, each with its runbook.
 *
 * @example
 * ```ts
 * const page = await listDeadLetters.run(ctx, { target: "app" });
 * ```
 */
export const listDeadLetters = defineOperation({
  name: "deadLetters.list",
  summary: "dead-lettered deliveries, newest first, each with its runbook",
  readOnly: true,
  input: z.strictObject({
    target: text("handler or destination name").optional(),
    limit: limitField.optional(),
    cursor: cursorField.optional(),
  }),
  run: (ctx, input) => listDeliveries.run(ctx, { ...input, status: "dead" }),
});

/**
 * One delivery (without its attempt log) and its runbook.
 *
 * @example
 * ```ts
 * const delivery = await showDelivery.run(ctx, { id: "dlv_01J…" });
 * ```
 */
export const showDelivery = defineOperation({
  name: "deliveries.show",
  summary: "one delivery and its runbook",
  readOnly: true,
  input: z.strictObject({ id: text("delivery id") }),
  run: async (ctx, { id }) => {
    const delivery = await ctx.store.deliveryById(id);
    if (!delivery) throw hookinboxError("HOOKINBOX_DELIVERY_NOT_FOUND", id);
    return withRunbook(delivery, ctx.runbooks);
  },
});

/**
 * Runs one delivery now: a dead one with a fresh attempt budget, a pending one at once, a blocked
 * one by running the delivery that blocks its ordering key. One id is the operator's explicit
 * choice, so no runbook override is asked; running or finished is HOOKINBOX_DELIVERY_NOT_RETRYABLE.
 *
 * @example
 * ```ts
 * const delivery = await retryDelivery.run(ctx, { id: "dlv_01J…" });
 * ```
 */
export const retryDelivery = defineOperation({
  name: "deliveries.retry",
  summary: "run one pending, blocked or dead delivery now",
  readOnly: false,
  input: z.strictObject({ id: text("delivery id") }),
  run: async (ctx, { id }) => {
    const delivery = await ctx.store.retryDelivery(id, ctx.now());
    if (!delivery) throw hookinboxError("HOOKINBOX_DELIVERY_NOT_FOUND", id);
    ctx.wake?.();
    return delivery;
  },
});

/** Runs deliveries now after the runbook check, with progress; unknown ids are skipped. */
async function retryViews(
  ctx: OperationContext,
  views: readonly DeliveryView[],
  requested: number,
  override: boolean,
) {
  checkSafeToReprocess(views, ctx.runbooks, override);
  const result = await runNow(
    ctx.store,
    views.map((d) => d.id),
    ctx.now(),
    ctx.onProgress && ((done) => ctx.onProgress?.(done, views.length)),
  );
  ctx.wake?.();
  return { ...result, skipped: result.skipped + (requested - views.length) };
}

const overrideField = z
  .boolean({ error: "must be true or false" })
  .default(false)
  .describe("retry even types whose runbook says they are not safe to reprocess");

/**
 * Runs several deliveries now (see `retryDelivery`); those gone, running or finished are skipped.
 * HOOKINBOX_UNSAFE_TO_REPROCESS, before anything runs, when a runbook says one of their event
 * types is not safe to reprocess and `override` is not set. `dryRun: true` answers how many of
 * them (pending, blocked or dead) it would run, per target, and runs none.
 *
 * @example
 * ```ts
 * const { retried, skipped } = await retryDeliveriesNow.run(ctx, { ids, override: false });
 * ```
 */
export const retryDeliveriesNow = defineOperation({
  name: "deliveries.retryMany",
  summary: "run several deliveries now (runbook check; override for unsafe types)",
  readOnly: false,
  input: z.strictObject({
    ids: z
      .array(z.string(), { error: "must be 1 to 500 delivery ids" })
      .min(1, "must be 1 to 500 delivery ids")
      .max(500, "must be 1 to 500 delivery ids"),
    override: overrideField,
    dryRun: dryRunField,
  }),
  run: async (ctx, { ids, override, dryRun }) => {
    const unique = [...new Set(ids)];
    if (dryRun) {
      const statuses = ["pending", "blocked", "dead"] as const;
      return retryPlan(await ctx.store.countDeliveryKinds({ statuses, ids: unique }), ctx.runbooks);
    }
    return retryMany(ctx, unique, override);
  },
});

/**
 * The run of `retryDeliveriesNow` without its dry run: runs `ids` (unique) now, after the
 * runbook check, skipping those gone, running or finished.
 *
 * @example
 * ```ts
 * const { retried, skipped } = await retryMany(ctx, ["dlv_01J…", "dlv_01K…"], false);
 * ```
 */
export async function retryMany(
  ctx: OperationContext,
  ids: readonly string[],
  override: boolean,
): Promise<BulkRetryResult> {
  const views = await Promise.all(ids.map((id) => ctx.store.deliveryById(id)));
  const found = views.filter((v): v is DeliveryView => v !== null);
  return retryViews(ctx, found, ids.length, override);
}

/**
 * Puts every dead delivery of one target (`target`) or of all (`all: true`; one of the two is
 * required, not both) back in the queue with a fresh attempt budget, after the runbook check.
 * `dryRun: true` answers how many events and deliveries, per target, it would retry (and which
 * types a runbook says are not safe), and retries none.
 *
 * @example
 * ```ts
 * const { retried } = await retryDeadLetters.run(ctx, { target: "app", override: false });
 * const plan = await retryDeadLetters.run(ctx, { all: true, dryRun: true, override: false });
 * ```
 */
export const retryDeadLetters = defineOperation({
  name: "deadLetters.retryAll",
  summary: "retry every dead delivery (of one target, or all: true), runbook check first",
  readOnly: false,
  input: z.strictObject({
    target: text("handler or destination name").optional(),
    all: allField,
    override: overrideField,
    dryRun: dryRunField,
  }),
  check: (input) => checkBulkScope(input, ["target"]),
  run: async (ctx, { target, override, dryRun }) => {
    if (dryRun) {
      const query = { statuses: ["dead" as const], ...(target === undefined ? {} : { target }) };
      return retryPlan(await ctx.store.countDeliveryKinds(query), ctx.runbooks);
    }
    const dead: DeliveryView[] = [];
    let cursor: string | undefined;
    do {
      const page = await ctx.store.listDeliveries({ status: "dead", target, limit: 500, cursor });
      dead.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    return retryViews(ctx, dead, dead.length, override);
  },
});
