import { parseArgs } from "node:util";
import type { HookinboxConfig } from "../config/index.ts";
import { parseDuration } from "../config/units.ts";
import { hookinboxError } from "../errors.ts";
import { createInbox } from "../inbox.ts";
import { createLogger } from "../log.ts";
import { type CliContext, loadRawConfig } from "./context.ts";

function duration(flag: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) throw hookinboxError("HOOKINBOX_USAGE", `${flag} takes a duration (50s)`);
  return ms;
}

/**
 * `hookinbox work --once [--max-time 50s] [--grace 5s] [--concurrency N] [--config F]`: one
 * bounded pass over what is due (`inbox.processAvailable`), for a cron job on a host without a
 * long-lived worker. Prints the summary as one JSON line on stdout (logs go to stderr) and exits.
 *
 * @example
 * ```ts
 * await workCommand(ctx, ["--once", "--max-time", "50s"]);
 * ```
 */
export async function workCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: "string", short: "c" },
      once: { type: "boolean" },
      "max-time": { type: "string" },
      grace: { type: "string" },
      concurrency: { type: "string" },
    },
    strict: true,
  });
  if (!values.once) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "work runs one bounded pass: pass --once (a worker that keeps running is hookinbox start --role worker)",
    );
  }
  const maxMs = duration("--max-time", values["max-time"] ?? "50s");
  const graceMs = duration("--grace", values.grace ?? "5s");
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1)) {
    throw hookinboxError("HOOKINBOX_USAGE", "--concurrency takes a whole number from 1");
  }
  const raw = await loadRawConfig(ctx, values.config);
  const config = raw.config as HookinboxConfig;
  const logger = createLogger({ level: config.log?.level ?? "info", destination: process.stderr });
  const inbox = createInbox(config, { env: ctx.env, logger });
  try {
    const summary = await inbox.processAvailable({
      maxMs,
      graceMs,
      ...(concurrency === undefined ? {} : { concurrency }),
    });
    ctx.stdout.write(`${JSON.stringify(summary)}\n`);
    return 0;
  } finally {
    await inbox.close();
  }
}
