import type { Command } from "commander";
import { hookinboxError } from "../errors.ts";
import { listDeadLetters, retryDeadLetters, retryDelivery } from "../operations/deliveries.ts";
import type { Runbook } from "../operations/runbook-lookup.ts";
import type { DeliveryView } from "../store/queue-types.ts";
import { planText } from "./bulk-plan.ts";
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

type RetryResult = Awaited<ReturnType<typeof retryDeadLetters.run>>;

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
 * - `retry --all | --target T [--override-unsafe] [--dry-run]`: retries every dead delivery (of
 *   all targets, or of one; `--all` with `--target` is refused), with a progress bar; refused when
 *   a runbook says one of their event types is not safe to reprocess, unless overridden.
 *   `--dry-run` prints how many it would retry, per target, and retries none.
 *
 * A running worker (another process on the same store) picks retried deliveries up at its next
 * poll (`worker.pollInterval`, default 1s).
 *
 * @example
 * ```ts
 * registerDlq(program, host); // hookinbox dlq retry --target app --dry-run
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
    .leaf(dlq, "retry", "put one dead delivery (or --target T, or --all) back in the queue")
    .argument("[deliveryId]", "the delivery to retry")
    .option("--all", "every dead delivery of every target")
    .option("--target <name>", "every dead delivery of this handler or destination")
    .option("--override-unsafe", "retry even types whose runbook says not safe to reprocess")
    .option("--dry-run", "with --all or --target: count what would be retried, per target")
    .action(async (id: string | undefined, options) => {
      const bulk = options.all === true || options.target !== undefined;
      if (id !== undefined && (bulk || options.overrideUnsafe || options.dryRun))
        throw hookinboxError(
          "HOOKINBOX_USAGE",
          "--all, --target, --override-unsafe and --dry-run go without a delivery id",
        );
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
          ...(options.dryRun
            ? {}
            : {
                progress: {
                  label: "dead deliveries retried",
                  done: (r: RetryResult) => ("retried" in r ? r.retried + r.skipped : 0),
                },
              }),
          text: (r: RetryResult) =>
            "retried" in r
              ? `retried ${r.retried} dead deliver${r.retried === 1 ? "y" : "ies"}${r.skipped > 0 ? ` (${r.skipped} no longer dead)` : ""}`
              : planText(r, "retry"),
        },
        {
          target: options.target,
          all: options.all,
          override: options.overrideUnsafe === true,
          dryRun: options.dryRun === true,
        },
      );
    });
}
