import { Writable } from "node:stream";
import { parseArgs } from "node:util";
import { type HookinboxConfig, parseDuration, resolveConfig } from "../config/index.ts";
import { hookinboxError } from "../errors.ts";
import { createInbox } from "../inbox.ts";
import { createLogger } from "../log.ts";
import type { ProcessAvailableResult } from "../queue/process-available.ts";
import { type CliContext, loadRawConfig } from "./context.ts";

const usage =
  "hookinbox work --once [--max-time 50s] [--grace 5s] [--concurrency N] [--json] (a long-running worker is hookinbox start --role worker)";

function duration(option: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined)
    throw hookinboxError("HOOKINBOX_USAGE", `${option} must be a duration like 50s or 500ms`);
  return ms;
}

/**
 * The summary line of one `work --once` run.
 *
 * @example
 * ```ts
 * workSummary({ done: 3, retried: 1, dead: 0, failed: 0, released: 0, remaining: 2 });
 * // "processed 4 deliveries: 3 done, 1 retried, 0 dead, 0 failed, 0 released; 2 still due"
 * ```
 */
export function workSummary(result: ProcessAvailableResult): string {
  const ran = result.done + result.retried + result.dead + result.failed;
  return `processed ${ran} deliveries: ${result.done} done, ${result.retried} retried, ${result.dead} dead, ${result.failed} failed, ${result.released} released; ${result.remaining} still due`;
}

/**
 * `hookinbox work --once`: loads the config as `hookinbox start` does, processes what is due for
 * at most `--max-time` (default 50s) plus `--grace` (default 5s) with `inbox.processAvailable`,
 * prints one summary line (or `--json`) and exits: 0 (dead letters included: they are the
 * handlers' outcome, not the command's), 1 when the store fails, 2 on a usage error. For cron, a
 * Kubernetes CronJob or a systemd timer. Logs go to stderr.
 *
 * @example
 * ```ts
 * await workCommand(ctx, ["--once", "--max-time", "50s", "--json"]); // 0
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
      json: { type: "boolean" },
    },
    strict: true,
  });
  if (values.once !== true)
    throw hookinboxError("HOOKINBOX_USAGE", `work runs once and exits: ${usage}`);
  const maxMs = duration("--max-time", values["max-time"] ?? "50s");
  const graceMs = duration("--grace", values.grace ?? "5s");
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1))
    throw hookinboxError("HOOKINBOX_USAGE", "--concurrency takes an integer of at least 1");

  const raw = await loadRawConfig(ctx, values.config);
  const resolved = resolveConfig(raw.config, ctx.env);
  // Logs on stderr: stdout carries only the summary (or the JSON).
  const stderr = new Writable({
    write(chunk, _encoding, done) {
      ctx.stderr.write(String(chunk));
      done();
    },
  });
  const logger = createLogger({ level: resolved.log.level, destination: stderr });
  // A config file is checked at run time (resolveConfig), not by its static type.
  const inbox = createInbox(raw.config as HookinboxConfig, { env: ctx.env, logger });
  try {
    const result = await inbox.processAvailable({
      maxMs,
      graceMs,
      ...(concurrency === undefined ? {} : { concurrency }),
    });
    ctx.stdout.write(`${values.json ? JSON.stringify(result) : workSummary(result)}\n`);
    return 0;
  } finally {
    await inbox.close();
  }
}
