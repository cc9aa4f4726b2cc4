import type { Command } from "commander";
import {
  retryDeliveriesNow,
  retryDelivery,
  retryMany,
  showDelivery,
} from "../operations/deliveries.ts";
import type { OperationContext } from "../operations/operation.ts";
import type { CommandHost } from "./command-host.ts";
import { runbookCell } from "./dlq.ts";

/** The deliveries as they are after the retry (those that vanished are left out). */
async function after(ops: OperationContext, ids: readonly string[]) {
  const views = await Promise.all(ids.map((id) => showDelivery.run(ops, { id }).catch(() => null)));
  return views.filter((v) => v !== null);
}

/**
 * `hookinbox retry <deliveryId>…`: runs deliveries now, after a fix, without waiting for the next
 * backoff step: a dead one with a fresh attempt budget, a pending one at once, a blocked one by
 * running the delivery that blocks its ordering key. Several ids show a progress bar and are
 * refused when a runbook says one of their event types is not safe to reprocess, unless
 * `--override-unsafe`. One id that is running or finished is an error, not a skip.
 *
 * @example
 * ```ts
 * registerRetry(program, host); // hookinbox retry dlv_01J… dlv_01K… --override-unsafe
 * ```
 */
export function registerRetry(program: Command, host: CommandHost): void {
  host
    .leaf(program, "retry", "run pending, blocked or dead deliveries now")
    .argument("<deliveryId...>", "the deliveries to run now")
    .option("--override-unsafe", "retry even types whose runbook says not safe to reprocess")
    .action((ids: string[], options) => {
      const unique = [...new Set(ids)];
      return host.run(
        options,
        {
          operation: retryDeliveriesNow,
          access: "write",
          names: { ids: "<deliveryId>" },
          execute: async (ops, input) => {
            // One id: a delivery that is running or finished is an error, not a skip.
            if (unique.length === 1) await retryDelivery.run(ops, { id: unique[0]! });
            const result =
              unique.length === 1
                ? { retried: 1, skipped: 0 }
                : await retryMany(ops, unique, input.override);
            return { ...result, deliveries: await after(ops, unique) };
          },
          ...(unique.length > 1
            ? { progress: { label: "run now", done: () => unique.length } }
            : {}),
          text: ({ deliveries, skipped }) =>
            [
              ...deliveries.map(
                (v) =>
                  `${v.id} (${v.source}:${v.type ?? "-"} → ${v.target}): now ${v.status}, due ${v.runAt}; runbook: ${runbookCell(v.runbook)}`,
              ),
              ...(skipped > 0 ? [`${skipped} skipped (running or finished)`] : []),
            ].join("\n"),
        },
        { ids: unique, override: options.overrideUnsafe === true },
      );
    });
}
