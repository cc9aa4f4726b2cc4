import { parseArgs } from "node:util";
import { hookinboxError } from "../errors.ts";
import { checkSafeToReprocess, retryDeliveries } from "../operations/retry-deliveries.ts";
import type { DeliveryView } from "../store/queue-types.ts";
import { type CliContext, loadRunbooks, openConfiguredStore } from "./context.ts";
import { runbookCell } from "./dlq.ts";
import { progressBar } from "./progress.ts";

const usage = "use `hookinbox retry <deliveryId> [<deliveryId> …] [--override-unsafe] [--json]`";

/**
 * `hookinbox retry <deliveryId>…`: runs deliveries now, after a fix, without waiting for the next
 * backoff step: a dead one with a fresh attempt budget, a pending one at once, a blocked one by
 * running the delivery that blocks its ordering key. Several ids show a progress bar and are
 * refused when a runbook says one of their event types is not safe to reprocess, unless
 * `--override-unsafe`.
 *
 * @example
 * ```ts
 * await retryCommand(ctx, ["dlv_01J…"]);
 * ```
 */
export async function retryCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      "override-unsafe": { type: "boolean" },
      json: { type: "boolean" },
    },
  });
  if (positionals.length === 0) throw hookinboxError("HOOKINBOX_USAGE", usage);
  const runbooks = await loadRunbooks(ctx, values.config);
  const store = await openConfiguredStore(ctx, values.config);
  try {
    const views: DeliveryView[] = [];
    for (const id of new Set(positionals)) {
      const view = await store.deliveryById(id);
      if (!view) throw hookinboxError("HOOKINBOX_DELIVERY_NOT_FOUND", id);
      views.push(view);
    }
    if (views.length > 1) checkSafeToReprocess(views, runbooks, values["override-unsafe"] === true);
    const progress = views.length > 1 ? progressBar(ctx.stderr, views.length, "run now") : null;
    const now = Date.now();
    if (views.length === 1) {
      // One id: a delivery that is running or finished is an error, not a skip.
      await store.retryDelivery(views[0]!.id, now);
    }
    const result =
      views.length === 1
        ? { retried: 1, skipped: 0 }
        : await retryDeliveries(
            store,
            views.map((v) => v.id),
            now,
            (done) => progress?.update(done),
          );
    progress?.finish(views.length);
    const after = await Promise.all(views.map((v) => store.deliveryById(v.id)));
    if (values.json) {
      ctx.stdout.write(`${JSON.stringify({ ...result, deliveries: after })}\n`);
      return 0;
    }
    for (const view of after) {
      if (!view) continue;
      const runbook = runbooks.for(view.source, view.type);
      ctx.stdout.write(
        `${view.id} (${view.source}:${view.type ?? "-"} → ${view.target}): now ${view.status}, due ${view.runAt}; runbook: ${runbookCell(runbook)}\n`,
      );
    }
    if (result.skipped > 0) ctx.stdout.write(`${result.skipped} skipped (running or finished)\n`);
    return 0;
  } finally {
    await store.close();
  }
}
