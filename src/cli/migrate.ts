import { parseArgs } from "node:util";
import { loadConfigFile, resolveStoreUrl } from "../config/index.ts";
import { openStore } from "../store/open-store.ts";
import type { CliContext } from "./context.ts";

/**
 * `hookinbox migrate [--config F]`: applies pending numbered migrations and says which.
 *
 * @example
 * ```ts
 * await migrateCommand(ctx, []);
 * ```
 */
export async function migrateCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { config: { type: "string", short: "c" } } });
  const loaded = await loadConfigFile({ cwd: ctx.cwd, path: values.config });
  const store = openStore(resolveStoreUrl(loaded?.config, ctx.env));
  try {
    const report = await store.migrate();
    ctx.stdout.write(
      report.applied.length === 0
        ? `store is up to date (migration ${report.current})\n`
        : `applied ${report.applied.join(", ")}; store is at migration ${report.current}\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
