import { parseArgs } from "node:util";
import { runRetention } from "../audit/retention.ts";
import { loadConfigFile } from "../config/index.ts";
import { resolveRetention } from "../config/resolve-retention.ts";
import { hookinboxError } from "../errors.ts";
import { type CliContext, openConfiguredStore } from "./context.ts";

type Duration = string | number;
interface RetentionSettings {
  retention?: Partial<Record<"payloads" | "events" | "receipts" | "rejected" | "dedup", Duration>>;
  http?: { rejectedRetention?: Duration };
}

/**
 * `hookinbox retention run [--dry-run]`: applies `retention` now, as the hourly sweep does:
 * payloads, whole finished events, accepted and rejected receipts, and dedup keys older than
 * their windows (audit leaves stay, so proofs still verify). `--dry-run` counts and changes
 * nothing.
 *
 * @example
 * ```ts
 * await retentionCommand(ctx, ["run", "--dry-run"]); // "would purge 12 payloads, remove 3 events, …"
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
  const settings = (loaded?.config ?? {}) as RetentionSettings;
  const windows = resolveRetention(settings.retention, settings.http?.rejectedRetention);
  const store = await openConfiguredStore(ctx, values.config);
  try {
    const dryRun = values["dry-run"] === true;
    // Its own process, beside a gateway that may be writing the same SQLite file: pause between
    // batches so the gateway's writer gets the lock (see runRetention).
    const n = await runRetention(store, windows, { now: Date.now(), dryRun, pauseMs: 100 });
    const verb = dryRun ? "would " : "";
    ctx.stdout.write(
      `${dryRun ? "would purge" : "purged"} ${n.payloads} payloads, ${verb}remove${dryRun ? "" : "d"} ${n.events} events, ${n.receipts} receipts, ${n.rejected} rejected receipts and ${n.dedup} dedup keys (events with unfinished or dead deliveries are kept; audit leaves stay)\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
