import { readFileSync } from "node:fs";
import { hookinboxError, isHookinboxError } from "../errors.ts";
import { auditCommand } from "./audit.ts";
import type { CliContext } from "./context.ts";
import { destinationsCommand } from "./destinations.ts";
import { dlqCommand } from "./dlq.ts";
import { effectsCommand } from "./effects.ts";
import { eventsCommand } from "./events.ts";
import { migrateCommand } from "./migrate.ts";
import { probeCommand } from "./probe.ts";
import { replayCommand } from "./replay.ts";
import { retentionCommand } from "./retention.ts";
import { retryCommand } from "./retry.ts";
import { sendCommand } from "./send.ts";
import { startCommand } from "./start.ts";
import { stuckCommand } from "./stuck.ts";

/** The version in hookinbox's own package.json (the nearest one named hookinbox above this file). */
function packageVersion(): string {
  for (const up of ["../../package.json", "../../../package.json"]) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(up, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === "hookinbox" && manifest.version) return manifest.version;
    } catch {
      // not there: look one folder up (src/cli/ from a checkout, dist/esm/cli/ when built)
    }
  }
  return "unknown";
}

const usage = `hookinbox: an inbox for webhooks

Usage:
  hookinbox --version                                      print the version
  --debug (with any command)                               print the stack trace of a failure
  hookinbox start [--config FILE] [--port N] [--host H] [--role all|ingest|worker]   run the gateway (default: embedded SQLite)
  hookinbox migrate [--config FILE]                       apply store migrations
  hookinbox events list [--source S] [--type T] [--status S] [--limit N] [--cursor C] [--json]
  hookinbox events show <id> [--json]
  hookinbox send <source> [--url URL] [--type T]          sign and post a test event to a configured source
  hookinbox send <provider> --to URL (--secret S | --private-key FILE) [--type T] [--id ID] [--data FILE] [--times N] [--parallel N] [--delay MS] [--replay-of ID] [--json]
                                                          send a provider's signed sample to any receiver
  hookinbox probe URL --provider P --secret S [--effects URL|CMD] [--budget MS] [--json]
                                                          test a receiver the way providers treat it (exit 1 on a failed check)
  hookinbox replay <eventId> [--target T ...] [--destination NAME ...] [--json]   re-deliver one event (new deliveries, flagged replay)
  hookinbox replay --filter source=S,type=T,status=S,from=ISO,to=ISO [--target T ...] [--json]
  hookinbox dlq list [--target T] [--limit N] [--cursor C] [--json]   dead-lettered deliveries
  hookinbox dlq retry <deliveryId> | --all [--target T] [--override-unsafe]   put dead deliveries back in the queue
  hookinbox retry <deliveryId> ... [--override-unsafe] [--json]   run pending, blocked or dead deliveries now
  hookinbox destinations list [--json]                    forwarding destinations: state, circuit, in flight, pending, dead
  hookinbox destinations pause|resume|enable <name> [--reason TEXT] [--json]   hold or release a destination's deliveries
  hookinbox destinations deliveries <name> [--status S] [--limit N] [--cursor C] [--json]
  hookinbox stuck [--older-than 1h] [--limit N] [--json]  what needs a human (exit 1 when anything does)
  hookinbox effects list [--status held|processing|done] [--event E] [--json]
  hookinbox effects resolve <effectId> --done|--release   settle an effect held for a human
  hookinbox audit head                                    sign a tree head of the audit log now (JSON: save it)
  hookinbox audit prove <eventId> [--size N]              the event's inclusion proof
  hookinbox audit consistency --from N [--to N]           proof that the log of N leaves is a prefix of the later one
  hookinbox audit verify [--head FILE] [--key HEX]        recheck every event and leaf against a trusted head (exit 1 names the first bad one)
  hookinbox retention run [--dry-run]                     purge payloads older than retention.payloads (finished events only; proofs still verify)

Config: hookinbox.config.ts | .mjs | .js | .json in the current folder, or --config.
`;

/**
 * Runs the `hookinbox` command with its arguments; resolves to the exit code. Errors print their
 * stable code and message (never a secret) to stderr.
 *
 * @example
 * ```ts
 * process.exitCode = await main(["events", "list", "--json"]);
 * ```
 */
export async function main(argv: string[], given?: CliContext): Promise<number> {
  // --debug anywhere: failures print their stack (and their causes') after the one line.
  const debug = argv.includes("--debug");
  const [command, ...args] = argv.filter((arg) => arg !== "--debug");
  const stderr = given?.stderr ?? process.stderr;
  try {
    const ctx = given ?? processContext();
    switch (command) {
      case "start":
        return await startCommand(ctx, args);
      case "migrate":
        return await migrateCommand(ctx, args);
      case "events":
        return await eventsCommand(ctx, args);
      case "send":
        return await sendCommand(ctx, args);
      case "probe":
        return await probeCommand(ctx, args);
      case "replay":
        return await replayCommand(ctx, args);
      case "retry":
        return await retryCommand(ctx, args);
      case "dlq":
        return await dlqCommand(ctx, args);
      case "destinations":
        return await destinationsCommand(ctx, args);
      case "stuck":
        return await stuckCommand(ctx, args);
      case "effects":
        return await effectsCommand(ctx, args);
      case "audit":
        return await auditCommand(ctx, args);
      case "retention":
        return await retentionCommand(ctx, args);
      case undefined:
      case "--version":
      case "-v":
        ctx.stdout.write(`hookinbox ${packageVersion()}\n`);
        return 0;
      case "help":
      case "--help":
      case "-h":
        ctx.stdout.write(usage);
        return command === undefined ? 2 : 0;
      default:
        ctx.stderr.write(`hookinbox: unknown command "${command}"\n\n${usage}`);
        return 2;
    }
  } catch (error) {
    if (
      error instanceof TypeError &&
      (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
    ) {
      stderr.write(`hookinbox: HOOKINBOX_USAGE: ${error.message}\n\n${usage}`);
      return 2;
    }
    const known = isHookinboxError(error)
      ? error
      : hookinboxError(
          "HOOKINBOX_INTERNAL_ERROR",
          `${(error as Error)?.name ?? "Error"}: ${(error as Error)?.message ?? String(error)}; run with --debug for the stack`,
          error,
        );
    stderr.write(`hookinbox: ${known.code}: ${oneLine(known.message)}\n`);
    if (debug) stderr.write(`${stacks(error)}\n`);
    return known.code === "HOOKINBOX_USAGE" ? 2 : 1;
  }
}

/** The process's own context; a working folder that was deleted is a one-line failure. */
function processContext(): CliContext {
  let cwd: string;
  try {
    cwd = process.cwd();
  } catch {
    throw hookinboxError("HOOKINBOX_CWD_MISSING", "cd to an existing folder and run again");
  }
  return { cwd, env: process.env, stdout: process.stdout, stderr: process.stderr };
}

/** A message on one line, whatever a driver or a loader put in it. */
function oneLine(message: string): string {
  return message.replace(/\s*[\r\n]+\s*/g, " ");
}

/** The stack of an error and of each of its causes, for `--debug`. */
function stacks(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && parts.length < 5) {
    parts.push(current instanceof Error ? (current.stack ?? current.message) : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join("\ncaused by: ");
}
