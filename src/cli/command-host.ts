import type { Command } from "commander";
import type { z } from "zod";
import { hookinboxError } from "../errors.ts";
import type { CliContext } from "./context.ts";
import { type CliOperation, runCliOperation } from "./run-operation.ts";

/** What every command's registration needs: the context and the way to report an exit code. */
export interface CommandHost {
  readonly ctx: CliContext;
  /** A command that only groups subcommands; alone or with an unknown one it is a usage error. */
  group(parent: Command, name: string, description: string): Command;
  /** A command that runs: with `-c, --config <file>` and `--json`. */
  leaf(parent: Command, name: string, description: string, json?: boolean): Command;
  /** Adds `--limit <n>` and `--cursor <cursor>` (list commands). */
  paged(command: Command): Command;
  /** Runs an operation and records its exit code. */
  run<S extends z.ZodObject, R, Out = R>(
    options: { config?: string; json?: boolean },
    command: CliOperation<S, R, Out>,
    raw: Record<string, unknown>,
  ): Promise<void>;
  /** Records the exit code of a command that does not run an operation. */
  exit(code: number): void;
}

/**
 * Collects a repeatable option (`--target a --target b`) into an array.
 *
 * @example
 * ```ts
 * cmd.option("--target <pattern>", "…", collect);
 * ```
 */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * The host the program's commands register with; `exitCode()` reads what the command reported.
 *
 * @example
 * ```ts
 * const host = commandHost(ctx);
 * registerEvents(program, host);
 * await program.parseAsync(argv, { from: "user" });
 * return host.exitCode();
 * ```
 */
export function commandHost(ctx: CliContext): CommandHost & { exitCode(): number } {
  let code = 0;
  return {
    ctx,
    exitCode: () => code,
    exit(next) {
      code = next;
    },
    group(parent, name, description) {
      const group = parent.command(name).description(description);
      group.argument("[command]").action((given: string | undefined) => {
        const names = group.commands.map((c) => c.name()).filter((n) => n !== "help");
        throw hookinboxError(
          "HOOKINBOX_USAGE",
          `${given === undefined ? "" : `unknown command "${name} ${given}"; `}use hookinbox ${name} ${names.join("|")} (see hookinbox ${name} --help)`,
        );
      });
      return group;
    },
    leaf(parent, name, description, json = true) {
      const leaf = parent
        .command(name)
        .description(description)
        .option("-c, --config <file>", "config file (default: hookinbox.config.* in this folder)");
      return json ? leaf.option("--json", "print JSON instead of text") : leaf;
    },
    paged(command) {
      return command
        .option("--limit <n>", "page size, 1 to 500 (default 50)")
        .option("--cursor <cursor>", "the next page (printed after a full page)");
    },
    async run(options, command, raw) {
      code = await runCliOperation(ctx, options, command, raw);
    },
  };
}
