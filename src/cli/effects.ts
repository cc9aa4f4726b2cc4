import { parseArgs } from "node:util";
import { hookinboxError } from "../errors.ts";
import type { EffectView } from "../store/queue-types.ts";
import { type CliContext, openConfiguredStore } from "./context.ts";
import { renderTable } from "./table.ts";

const usage =
  "use `hookinbox effects list [--status held|processing|done] [--event E] [--json]` or `hookinbox effects resolve <effectId> --done|--release`";

/**
 * `hookinbox effects list|resolve`: the effect ledger.
 * - `list [--status held|processing|done] [--event E] [--json]`;
 * - `resolve <effectId> --done` (it happened: a later run returns without calling it) or
 *   `--release` (it did not happen: the next run calls it again). A held effect dead-letters its
 *   delivery, so resolving prints the `hookinbox dlq retry` that runs the handler again.
 *
 * @example
 * ```ts
 * await effectsCommand(ctx, ["resolve", "eff_01J…", "--done"]);
 * ```
 */
export async function effectsCommand(ctx: CliContext, args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      status: { type: "string" },
      event: { type: "string" },
      done: { type: "boolean" },
      release: { type: "boolean" },
      json: { type: "boolean" },
    },
  });
  if (action !== "list" && action !== "resolve") throw hookinboxError("HOOKINBOX_USAGE", usage);
  const status = values.status;
  if (status !== undefined && status !== "held" && status !== "processing" && status !== "done") {
    throw hookinboxError("HOOKINBOX_USAGE", "--status is held, processing or done");
  }
  const effectId = positionals[0];
  if (action === "resolve" && (effectId === undefined || positionals.length > 1)) {
    throw hookinboxError("HOOKINBOX_USAGE", usage);
  }
  if (action === "resolve" && values.done === values.release) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "say what happened: --done (the effect happened) or --release (it did not: run it again)",
    );
  }
  const store = await openConfiguredStore(ctx, values.config);
  try {
    if (action === "list") {
      const items = await store.listEffects({
        ...(status ? { status } : {}),
        ...(values.event ? { eventId: values.event } : {}),
      });
      if (values.json) ctx.stdout.write(`${JSON.stringify({ items })}\n`);
      else ctx.stdout.write(`${effectsTable(items)}\n`);
      return 0;
    }
    const resolution = values.done ? "done" : "release";
    const effect = await store.resolveEffect(effectId!, resolution, Date.now());
    if (!effect) throw hookinboxError("HOOKINBOX_EFFECT_NOT_FOUND", effectId);
    const dead = (
      await store.listDeliveries({ eventId: effect.eventId, status: "dead", limit: 500 })
    ).items.filter((d) => d.target === effect.target);
    if (values.json) {
      ctx.stdout.write(`${JSON.stringify({ effect, deadDeliveries: dead.map((d) => d.id) })}\n`);
      return 0;
    }
    ctx.stdout.write(
      resolution === "done"
        ? `effect ${effect.id} ("${effect.name}") marked done: a later run returns without calling it\n`
        : `effect ${effect.id} ("${effect.name}") released: the next run of its handler calls it again\n`,
    );
    for (const delivery of dead) {
      ctx.stdout.write(
        `its delivery ${delivery.id} is dead-lettered; run it again with: hookinbox dlq retry ${delivery.id}\n`,
      );
    }
    return 0;
  } finally {
    await store.close();
  }
}

function effectsTable(items: readonly EffectView[]): string {
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
