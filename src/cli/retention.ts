import { parseArgs } from "node:util";
import { purgeOldPayloads } from "../audit/retention.ts";
import { loadConfigFile } from "../config/index.ts";
import { parseDuration } from "../config/units.ts";
import { hookinboxError } from "../errors.ts";
import { type CliContext, openConfiguredStore } from "./context.ts";

/**
 * `hookinbox retention run [--dry-run]`: purges the bodies and headers of events older than
 * `retention.payloads` whose deliveries are all finished, keeping their digests and audit
 * leaves (proofs still verify). `--dry-run` counts and changes nothing.
 *
 * @example
 * ```ts
 * await retentionCommand(ctx, ["run", "--dry-run"]); // prints "would purge 12 payloads …"
 * ```
 */
export async function retentionCommand(ctx: CliContext, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: { config: { type: "string", short: "c" }, "dry-run": { type: "boolean" } },
  });
  if (sub !== "run") throw hookinboxError("HOOKINBOX_USAGE", "hookinbox retention run [--dry-run]");
  const loaded = await loadConfigFile({ cwd: ctx.cwd, path: values.config });
  const setting = (loaded?.config as { retention?: { payloads?: string | number } } | undefined)
    ?.retention?.payloads;
  const payloadsMs = setting === undefined ? undefined : parseDuration(setting);
  if (payloadsMs === undefined) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      'set retention.payloads in the config (a duration like "30d") to purge payloads',
    );
  }
  const store = await openConfiguredStore(ctx, values.config);
  try {
    const dryRun = values["dry-run"] === true;
    const purged = await purgeOldPayloads(store, { payloadsMs, now: Date.now(), dryRun });
    ctx.stdout.write(
      `${dryRun ? "would purge" : "purged"} ${purged} payloads older than ${String(setting)} (events with unfinished or dead deliveries keep theirs; audit leaves stay)\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
