import { CommanderError } from "commander";
import { hookinboxError, isHookinboxError } from "../errors.ts";
import { packageVersion } from "../package-version.ts";
import { commandHost } from "./command-host.ts";
import { type CliStreams, cliContext } from "./context.ts";
import { buildProgram } from "./program.ts";
import { terminalOutput } from "./terminal.ts";

/** Errors in what was asked (exit code 2), as opposed to what happened (1). */
const usageCodes = new Set<string>([
  "HOOKINBOX_USAGE",
  "HOOKINBOX_BULK_UNSCOPED",
  "HOOKINBOX_BULK_SCOPE_CONFLICT",
]);

/**
 * Runs the `hookinbox` command with its arguments; resolves to the exit code. Errors print their
 * stable code and message (never a secret) to stderr.
 *
 * @example
 * ```ts
 * process.exitCode = await main(["events", "list", "--json"]);
 * ```
 */
export async function main(argv: string[], given?: CliStreams): Promise<number> {
  // --debug anywhere: failures print their stack (and their causes') after the one line.
  const debug = argv.includes("--debug");
  const args = argv.filter((arg) => arg !== "--debug");
  const stderr = terminalOutput(given?.stderr ?? process.stderr);
  try {
    const ctx = cliContext(given ?? processContext());
    if (args.length === 0) {
      ctx.stdout.write(`hookinbox ${packageVersion()}\n`);
      return 0;
    }
    const host = commandHost(ctx);
    const program = buildProgram(host, args, packageVersion());
    await program.parseAsync(args, { from: "user" });
    return host.exitCode();
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version end here too (exit code 0); a group without its subcommand is 2.
      if (error.exitCode === 0) return 0;
      if (error.code === "commander.help") return 2;
      stderr.write(`hookinbox: HOOKINBOX_USAGE: ${usageLine(error, args)}\n`);
      return 2;
    }
    if (
      error instanceof TypeError &&
      (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
    ) {
      // node:util's hint about "--" after an unknown option is about positionals; cut it.
      const message = oneLine(error.message).replace(/\. To specify a positional argument.*$/, "");
      stderr.write(
        `hookinbox: HOOKINBOX_USAGE: ${message} (see hookinbox ${args[0] ? `${args[0]} ` : ""}--help)\n`,
      );
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
    return usageCodes.has(known.code) ? 2 : 1;
  }
}

/** Commander's error as hookinbox's one usage line: what is wrong and where the help is. */
function usageLine(error: CommanderError, args: readonly string[]): string {
  const message = oneLine(error.message.replace(/^error:\s*/, "")).replace(
    /^unknown command '([^']*)'/,
    'unknown command "$1"',
  );
  const path = args
    .filter((a) => !a.startsWith("-"))
    .slice(0, 2)
    .join(" ");
  const where = error.code === "commander.unknownCommand" || path === "" ? "" : `${path} `;
  return `${message} (see hookinbox ${where}--help)`;
}

/** The process's own context; a working folder that was deleted is a one-line failure. */
function processContext(): CliStreams {
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
