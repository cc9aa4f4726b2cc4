import type { Command } from "commander";
import { hookinboxError } from "../errors.ts";
import { listDeadLetters, retryDeadLetters, retryDelivery } from "../operations/deliveries.ts";
import type { Runbook } from "../operations/runbooks.ts";
import type { DeliveryView } from "../store/queue-types.ts";
import { oneLine } from "./cli-args.ts";
import type { CommandHost } from "./command-host.ts";
import { renderTable } from "./table.ts";

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

type WithRunbook = DeliveryView & { runbook: Runbook | null };

function deadTable(page: { items: WithRunbook[]; nextCursor: string | null }): string {
  const rows = page.items.map((d) => [
    d.id,
    d.eventId,
    d.target,
    String(d.attempts),
    oneLine(d.lastError, 60),
    d.completedAt ?? "-",
    `${d.source}:${d.type ?? "-"}`,
    runbookCell(d.runbook),
  ]);
  const table = renderTable(
    ["ID", "EVENT", "TARGET", "ATTEMPTS", "LAST ERROR", "COMPLETED AT", "TYPE", "RUNBOOK"],
    rows,
  );
  return page.nextCursor ? `${table}\nmore: --cursor ${page.nextCursor}` : table;
}

/**
 * `hookinbox dlq list|retry`: the dead-letter queue.
 * - `list [--target T] [--limit N] [--cursor C]`: dead deliveries, newest first, with runbooks;
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
 * registerDlq(program, host); // hookinbox dlq retry --all --target app
 * ```
 */
export function registerDlq(program: Command, host: CommandHost): void {
  const dlq = host.group(program, "dlq", "dead-lettered deliveries: list and retry");
  host
    .paged(host.leaf(dlq, "list", listDeadLetters.summary))
    .option("--target <name>", "only this handler or destination")
    .action((options) =>
      host.run(options, { operation: listDeadLetters, access: "read", text: deadTable }, options),
    );
  host
    .leaf(dlq, "retry", "put one dead delivery (or --all) back in the queue")
    .argument("[deliveryId]", "the delivery to retry")
    .option("--all", "every dead delivery (with --target: of one target)")
    .option("--target <name>", "with --all: only this handler or destination")
    .option("--override-unsafe", "retry even types whose runbook says not safe to reprocess")
    .action(async (id: string | undefined, options) => {
      if ((id === undefined) === (options.all !== true))
        throw hookinboxError(
          "HOOKINBOX_USAGE",
          "give a delivery id or --all (see hookinbox dlq retry --help)",
        );
      if (id !== undefined && (options.target !== undefined || options.overrideUnsafe))
        throw hookinboxError("HOOKINBOX_USAGE", "--target and --override-unsafe go with --all");
      if (id !== undefined) {
        return host.run(
          options,
          {
            operation: retryDelivery,
            access: "write",
            names: { id: "<deliveryId>" },
            text: (d) => `retried ${d.id} (${d.target}): ${d.status}, with a fresh attempt budget`,
          },
          { id },
        );
      }
      return host.run(
        options,
        {
          operation: retryDeadLetters,
          access: "write",
          progress: { label: "dead deliveries retried", done: (r) => r.retried + r.skipped },
          text: ({ retried, skipped }) =>
            `retried ${retried} dead deliver${retried === 1 ? "y" : "ies"}${skipped > 0 ? ` (${skipped} no longer dead)` : ""}`,
        },
        { target: options.target, override: options.overrideUnsafe === true },
      );
    });
}
