import type { z } from "zod";
import { type Operation, type OperationContext, parseInput } from "../operations/operation.ts";
import type { CliContext } from "./context.ts";
import { type StoreAccess, withOperations } from "./operation-context.ts";
import { type Progress, progressBar } from "./progress.ts";
import { escapeStrings, jsonForTerminal } from "./terminal.ts";

/** How one command runs an operation and shows its result. */
export interface CliOperation<S extends z.ZodObject, R, Out = R> {
  readonly operation: Operation<S, R>;
  readonly access: StoreAccess;
  /** A field's name on this command line, for usage errors (default `--kebab-case`). */
  readonly names?: Readonly<Record<string, string>>;
  /** What to run in the context (default: the operation itself). */
  readonly execute?: (ops: OperationContext, input: z.output<S>) => Promise<Out>;
  /** The text output, built from the result with every string escaped (escapeStrings); the JSON output is the result itself. */
  readonly text: (result: Out) => string;
  /** The exit code of a result (default 0). */
  readonly exitCode?: (result: Out) => number;
  /** A line on stderr for a result that did nothing, or null. */
  readonly warning?: (result: Out) => string | null;
  /** A progress bar on stderr for bulk work: its label and how much was done in the end. */
  readonly progress?: { readonly label: string; readonly done: (result: Out) => number };
}

const kebab = (field: string) => `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/**
 * Runs an operation from a command line: validates the input first (a usage error never touches
 * the store), opens the store as `access` says, runs, prints JSON (`--json`) or text, and
 * returns the exit code.
 *
 * @example
 * ```ts
 * return runCliOperation(ctx, { config, json }, { operation: listEvents, access: "read", text }, raw);
 * ```
 */
export async function runCliOperation<S extends z.ZodObject, R, Out = R>(
  ctx: CliContext,
  options: { readonly config?: string | undefined; readonly json?: boolean | undefined },
  command: CliOperation<S, R, Out>,
  raw: Record<string, unknown>,
): Promise<number> {
  // `--config` and `--json` are the host's own options, not the operation's input (which is strict).
  const defined = Object.fromEntries(
    Object.entries(raw).filter(([k, v]) => v !== undefined && k !== "config" && k !== "json"),
  );
  const input = parseInput(
    command.operation,
    defined,
    "HOOKINBOX_USAGE",
    (field) => command.names?.[field] ?? kebab(field),
  );
  let bar: Progress | null = null;
  const label = command.progress?.label;
  const onProgress =
    label === undefined
      ? undefined
      : (done: number, total: number) => {
          bar ??= progressBar(ctx.stderr, total, label);
          bar.update(done);
        };
  const execute =
    command.execute ??
    ((ops: OperationContext, parsed: z.output<S>) =>
      command.operation.run(ops, parsed) as Promise<unknown> as Promise<Out>);
  const result = await withOperations(
    ctx,
    options.config,
    command.access,
    (ops) => execute(ops, input),
    onProgress,
  );
  if (command.progress) {
    const done = command.progress.done(result);
    ((bar as Progress | null) ?? progressBar(ctx.stderr, done, command.progress.label)).finish(
      done,
    );
  }
  // Text is built from the result with every string escaped: a command cannot forget to.
  const output = options.json ? jsonForTerminal(result) : command.text(escapeStrings(result));
  if (output !== "") ctx.stdout.write(`${output}\n`);
  const warning = command.warning?.(escapeStrings(result));
  if (warning) ctx.stderr.write(`hookinbox: ${warning}\n`);
  return command.exitCode?.(result) ?? 0;
}
