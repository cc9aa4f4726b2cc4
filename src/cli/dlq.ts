import { parseArgs } from "node:util";
import { hookinboxError } from "../errors.ts";
import { checkSafeToReprocess, retryDeliveries } from "../operations/retry-deliveries.ts";
import type { Runbook } from "../operations/runbooks.ts";
import type { DeliveryView } from "../store/queue-types.ts";
import type { Store } from "../store/types.ts";
import { oneLine, parseLimitOption } from "./cli-args.ts";
import { type CliContext, loadRunbooks, openConfiguredStore } from "./context.ts";
import { progressBar } from "./progress.ts";
import { renderTable } from "./table.ts";

const usage =
  "use `hookinbox dlq list [--target T] [--limit N] [--cursor C] [--json]`, `hookinbox dlq retry <deliveryId>` or `hookinbox dlq retry --all [--target T] [--override-unsafe]`";

/**
 * `hookinbox dlq list|retry`: the dead-letter queue, read and changed in the store directly.
 * - `list [--target T] [--limit N] [--cursor C] [--json]`: dead deliveries, newest first;
 * - `retry <deliveryId>`: puts one back in the queue with a fresh attempt budget;
 * - `retry --all [--target T] [--override-unsafe]`: retries every dead delivery, with a progress
 *   bar; refused when a runbook says one of their event types is not safe to reprocess, unless
 *   overridden.
 *
 * A running worker (another process on the same store) picks retried deliveries up at its next
 * poll (`worker.pollInterval`, default 1s).
 *
 * @example
 * ```ts
 * await dlqCommand(ctx, ["list", "--json"]);
 * await dlqCommand(ctx, ["retry", "dlv_01J…"]);
 * ```
 */
export async function dlqCommand(ctx: CliContext, args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      target: { type: "string" },
      limit: { type: "string" },
      cursor: { type: "string" },
      all: { type: "boolean" },
      "override-unsafe": { type: "boolean" },
      json: { type: "boolean" },
    },
  });
  if (action !== "list" && action !== "retry") throw hookinboxError("HOOKINBOX_USAGE", usage);
  if (action === "retry") {
    const single = positionals[0];
    if (positionals.length > 1 || (single === undefined) === (values.all !== true)) {
      throw hookinboxError("HOOKINBOX_USAGE", usage);
    }
    if (single !== undefined && values.target !== undefined) {
      throw hookinboxError("HOOKINBOX_USAGE", "--target goes with `dlq retry --all`");
    }
  }
  const limit = parseLimitOption(values.limit);
  const runbooks = await loadRunbooks(ctx, values.config);
  const store = await openConfiguredStore(ctx, values.config);
  try {
    if (action === "list") {
      const page = await store.listDeliveries({
        status: "dead",
        target: values.target,
        limit,
        cursor: values.cursor,
      });
      const items = page.items.map((d) => ({ ...d, runbook: runbooks.for(d.source, d.type) }));
      if (values.json) {
        ctx.stdout.write(`${JSON.stringify({ ...page, items })}\n`);
        return 0;
      }
      const rows = items.map((d) => [
        d.id,
        d.eventId,
        d.target,
        String(d.attempts),
        oneLine(d.lastError, 60),
        d.completedAt ?? "-",
        `${d.source}:${d.type ?? "-"}`,
        runbookCell(d.runbook),
      ]);
      ctx.stdout.write(
        `${renderTable(["ID", "EVENT", "TARGET", "ATTEMPTS", "LAST ERROR", "COMPLETED AT", "TYPE", "RUNBOOK"], rows)}\n`,
      );
      if (page.nextCursor) ctx.stdout.write(`more: --cursor ${page.nextCursor}\n`);
      return 0;
    }
    const now = Date.now();
    if (!values.all) {
      const id = positionals[0]!;
      const delivery = await store.retryDelivery(id, now);
      if (!delivery) throw hookinboxError("HOOKINBOX_DELIVERY_NOT_FOUND", id);
      if (values.json) ctx.stdout.write(`${JSON.stringify(delivery)}\n`);
      else
        ctx.stdout.write(
          `retried ${delivery.id} (${delivery.target}): ${delivery.status}, with a fresh attempt budget\n`,
        );
      return 0;
    }
    const dead = await allDead(store, values.target);
    checkSafeToReprocess(dead, runbooks, values["override-unsafe"] === true);
    const progress = progressBar(ctx.stderr, dead.length, "dead deliveries retried");
    const { retried, skipped } = await retryDeliveries(
      store,
      dead.map((d) => d.id),
      now,
      (done) => progress.update(done),
    );
    if (!values.json) progress.finish(dead.length);
    if (values.json) ctx.stdout.write(`${JSON.stringify({ retried, skipped })}\n`);
    else
      ctx.stdout.write(
        `retried ${retried} dead deliver${retried === 1 ? "y" : "ies"}${skipped > 0 ? ` (${skipped} no longer dead)` : ""}\n`,
      );
    return 0;
  } finally {
    await store.close();
  }
}

/** Every dead delivery (of one target), a page at a time, newest first. */
async function allDead(store: Store, target: string | undefined): Promise<DeliveryView[]> {
  const all: DeliveryView[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listDeliveries({ status: "dead", target, limit: 500, cursor });
    all.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return all;
}

/**
 * A runbook in one table cell: owner and whether it is safe to reprocess.
 *
 * @example
 * ```ts
 * runbookCell({ owner: "billing", safeToReprocess: false, … }); // "billing, NOT safe"
 * ```
 */
export function runbookCell(runbook: Runbook | null): string {
  if (!runbook) return "-";
  const safe =
    runbook.safeToReprocess === null ? "safe?" : runbook.safeToReprocess ? "safe" : "NOT safe";
  return `${runbook.owner ?? "no owner"}, ${safe}`;
}
