import type { Command } from "commander";
import { hookinboxError } from "../errors.ts";
import { listEffects, resolveEffect } from "../operations/effects.ts";
import { effectStatuses } from "../operations/fields.ts";
import type { EffectView } from "../store/queue-types.ts";
import type { CommandHost } from "./command-host.ts";
import { renderTable } from "./table.ts";

function effectsTable({ items }: { items: readonly EffectView[] }): string {
  return renderTable(
    ["ID", "EVENT", "TARGET", "NAME", "STATUS", "ON STALE", "CLAIMS", "CLAIMED AT", "COMPLETED AT"],
    items.map((e) => [
      e.id,
      e.eventId,
      e.target,
      e.name,
      e.status,
      e.onStale,
      String(e.claims),
      e.claimedAt ?? "-",
      e.completedAt ?? "-",
    ]),
  );
}

function resolvedText(
  effect: EffectView & { deadDeliveries: string[] },
  resolution: "done" | "release",
): string {
  return [
    resolution === "done"
      ? `effect ${effect.id} ("${effect.name}") marked done: a later run returns without calling it`
      : `effect ${effect.id} ("${effect.name}") released: the next run of its handler calls it again`,
    ...effect.deadDeliveries.map(
      (id) => `its delivery ${id} is dead-lettered; run it again with: hookinbox dlq retry ${id}`,
    ),
  ].join("\n");
}

/**
 * `hookinbox effects list|resolve`: the effect ledger.
 * - `list [--status held|processing|done] [--event E]`;
 * - `resolve <effectId> --done` (it happened: a later run returns without calling it) or
 *   `--release` (it did not happen: the next run calls it again). A held effect dead-letters its
 *   delivery, so resolving prints the `hookinbox dlq retry` that runs the handler again.
 *
 * @example
 * ```ts
 * registerEffects(program, host); // hookinbox effects resolve eff_01J… --done
 * ```
 */
export function registerEffects(program: Command, host: CommandHost): void {
  const effects = host.group(program, "effects", "the effect ledger: list and resolve");
  host
    .leaf(effects, "list", listEffects.summary)
    .option("--status <status>", `only this status: ${effectStatuses.join(", ")}`)
    .option("--event <id>", "only this event's effects")
    .action((options) =>
      host.run(
        options,
        {
          operation: listEffects,
          access: "read",
          names: { eventId: "--event" },
          text: effectsTable,
        },
        { status: options.status, eventId: options.event },
      ),
    );
  host
    .leaf(effects, "resolve", resolveEffect.summary)
    .argument("<effectId>", "the held effect")
    .option("--done", "it happened: later runs return without calling it")
    .option("--release", "it did not happen: the next run calls it again")
    .action((id: string, options) => {
      if (options.done === options.release)
        throw hookinboxError(
          "HOOKINBOX_USAGE",
          "say what happened: --done (the effect happened) or --release (it did not: run it again)",
        );
      const resolution = options.done ? "done" : "release";
      return host.run(
        options,
        {
          operation: resolveEffect,
          access: "write",
          names: { id: "<effectId>" },
          text: (effect) => resolvedText(effect, resolution),
        },
        { id, resolution },
      );
    });
}
