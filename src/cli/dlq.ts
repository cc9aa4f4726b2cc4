import { parseArgs } from "node:util";
import { hookinboxError, isHookinboxError } from "../errors.ts";
import type { DeliveryView } from "../store/queue-types.ts";
import type { Store } from "../store/types.ts";
import { oneLine, parseLimitOption } from "./cli-args.ts";
import { type CliContext, openConfiguredStore } from "./context.ts";
import { renderTable } from "./table.ts";

const usage =
  "use `hookinbox dlq list [--target T] [--limit N] [--cursor C] [--json]`, `hookinbox dlq retry <deliveryId>` or `hookinbox dlq retry --all [--target T]`";

/**
 * `hookinbox dlq list|retry`: the dead-letter queue, read and changed in the store directly.
 * - `list [--target T] [--limit N] [--cursor C] [--json]`: dead deliveries, newest first;
 * - `retry <deliveryId>`: puts one back in the queue with a fresh attempt budget;
 * - `retry --all [--target T]`: pages through the dead deliveries and retries each.
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
  const store = await openConfiguredStore(ctx, values.config);
  try {
    if (action === "list") {
      const page = await store.listDeliveries({
        status: "dead",
        target: values.target,
        limit,
        cursor: values.cursor,
      });
      if (values.json) {
        ctx.stdout.write(`${JSON.stringify(page)}\n`);
        return 0;
      }
      const rows = page.items.map((d) => [
        d.id,
        d.eventId,
        d.target,
        String(d.attempts),
        oneLine(d.lastError, 60),
        d.completedAt ?? "-",
      ]);
      ctx.stdout.write(
        `${renderTable(["ID", "EVENT", "TARGET", "ATTEMPTS", "LAST ERROR", "COMPLETED AT"], rows)}\n`,
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
    const { retried, skipped } = await retryAll(store, values.target, now);
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

/** Retries every dead delivery (of one target), a page at a time; counts those retried. */
async function retryAll(
  store: Store,
  target: string | undefined,
  now: number,
): Promise<{ retried: number; skipped: number }> {
  let retried = 0;
  let skipped = 0;
  let cursor: string | undefined;
  do {
    // Newest first with an id cursor: what this loop retries never shows up again.
    const page = await store.listDeliveries({ status: "dead", target, limit: 500, cursor });
    for (const delivery of page.items) {
      if (await retryOne(store, delivery, now)) retried++;
      else skipped++;
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return { retried, skipped };
}

async function retryOne(store: Store, delivery: DeliveryView, now: number): Promise<boolean> {
  try {
    return (await store.retryDelivery(delivery.id, now)) !== null;
  } catch (error) {
    // Retried by someone else since it was listed.
    if (isHookinboxError(error, "HOOKINBOX_DELIVERY_NOT_RETRYABLE")) return false;
    throw error;
  }
}
