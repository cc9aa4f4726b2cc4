import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Command } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { commandHost } from "../../src/cli/command-host.ts";
import { cliContext } from "../../src/cli/context.ts";
import { buildProgram } from "../../src/cli/program.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { tempDir } from "../helpers/temp.ts";

const run = promisify(execFile);

/** Every command path of the program ("events list", "retention run", …), from commander's tree. */
function commandPaths(): string[][] {
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  const program = buildProgram(
    commandHost(cliContext({ cwd: process.cwd(), env: {}, stdout: sink, stderr: sink })),
    [],
    "0",
  );
  const walk = (command: Command, path: string[]): string[][] =>
    command.commands
      .filter((c) => c.name() !== "help")
      .flatMap((c) => [[...path, c.name()], ...walk(c, [...path, c.name()])]);
  return walk(program, []);
}

/** The options `path` requires, each with a placeholder value ("audit consistency --from 1"). */
function required(path: string[]): string[] {
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  let command: Command | undefined = buildProgram(
    commandHost(cliContext({ cwd: process.cwd(), env: {}, stdout: sink, stderr: sink })),
    [],
    "0",
  );
  for (const name of path) command = command?.commands.find((c) => c.name() === name);
  return (command?.options ?? []).filter((o) => o.mandatory).flatMap((o) => [o.long!, "1"]);
}

describe("the hookinbox argument parser (in-process)", () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it("answers --help on every command and subcommand, exit 0, on stdout", async () => {
    const paths = commandPaths();
    // 30, plus overview, events search, receipts list and runbooks list (and their groups), work,
    // and transform test (and its group).
    expect(paths.length).toBe(40);
    for (const path of paths) {
      const help = await runCli([...path, "--help"]);
      expect({ path, code: help.code, stderr: help.stderr }).toEqual({ path, code: 0, stderr: "" });
      expect(help.stdout).toContain(`Usage: hookinbox ${path.join(" ")}`);
    }
    expect((await runCli(["send", "--help"])).stdout).toContain("--private-key <file>");
    const top = await runCli(["--help"]);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain("completion");
  });

  it("keeps usage errors to one line with HOOKINBOX_USAGE, exit 2", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["frobnicate"], /unknown command "frobnicate"/],
      [["events"], /use hookinbox events list\|search\|show/],
      [["events", "frob"], /unknown command "events frob"/],
      [["events", "list", "--bogus"], /unknown option '--bogus'.*hookinbox events list --help/],
      [["events", "list", "--limit", "0"], /--limit must be an integer from 1 to 500/],
      [["events", "list", "--status", "lost"], /--status must be one of received, ignored/],
      [["events", "show"], /missing required argument 'id'/],
      [["stuck", "--older-than", "soon"], /--older-than must be a duration/],
      [["dlq", "retry", "dlv_1", "--all"], /go without a delivery id/],
      [["effects", "resolve", "eff_1"], /--done .* or --release/],
      [["replay", "--filter", "colour=red"], /--filter takes key=value/],
      [["replay", "--filter", "from=yesterday"], /--filter from must be an ISO 8601 time/],
      [["completion", "fish"], /bash or zsh/],
      [["start", "--nope"], /HOOKINBOX_USAGE/],
      [["work"], /work runs once and exits: hookinbox work --once/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({
        args,
        code: 2,
        stdout: "",
      });
      expect(result.stderr).toMatch(/^hookinbox: HOOKINBOX_USAGE: [^\n]*\n$/);
      expect(result.stderr).toMatch(message);
    }
  });

  it("refuses an unknown option on every command and subcommand, in one line, exit 2", async () => {
    const paths = [[], ...commandPaths()];
    expect(paths.length).toBe(41);
    for (const path of paths) {
      // Required options given (commander checks them first), so only the unknown one is wrong.
      const result = await runCli([...path, ...required(path), "--no-such-option"]);
      expect({ path, code: result.code, stdout: result.stdout }).toEqual({
        path,
        code: 2,
        stdout: "",
      });
      // commander's "unknown option", or node:util's "Unknown option" for the commands that
      // parse their own arguments (start, work, migrate, send, probe, retention run).
      expect(result.stderr).toMatch(
        /^hookinbox: HOOKINBOX_USAGE: [Uu]nknown option '--no-such-option' \(see hookinbox (?:[a-z]+ )*--help\)\n$/,
      );
    }
  });

  it("refuses a bulk action with no scope, or with --all and a filter, before opening a store, exit 2", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["dlq", "retry"], /^hookinbox: HOOKINBOX_BULK_UNSCOPED: [^\n]*--all[^\n]*target\n$/],
      [["dlq", "retry", "--dry-run"], /^hookinbox: HOOKINBOX_BULK_UNSCOPED: /],
      [
        ["dlq", "retry", "--all", "--target", "app"],
        /^hookinbox: HOOKINBOX_BULK_SCOPE_CONFLICT: [^\n]*with target\n$/,
      ],
      [
        ["replay", "--all", "--filter", "source=stripe"],
        /^hookinbox: HOOKINBOX_BULK_SCOPE_CONFLICT: [^\n]*with source\n$/,
      ],
    ];
    for (const [args, stderr] of cases) {
      const result = await runCli(args);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({
        args,
        code: 2,
        stdout: "",
      });
      expect(result.stderr).toMatch(stderr);
    }
  });

  it("prints bash completion that completes commands, subcommands and options in a real bash", async () => {
    const script = join(tmp.dir, "hookinbox.bash");
    const printed = await runCli(["completion", "bash"]);
    expect(printed.code).toBe(0);
    writeFileSync(script, printed.stdout);
    const complete = async (...words: string[]) => {
      const line = ["hookinbox", ...words].map((w) => `'${w}'`).join(" ");
      const { stdout } = await run("bash", [
        "-c",
        `source '${script}'; COMP_WORDS=(${line}); COMP_CWORD=${words.length}; _hookinbox; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ]);
      return stdout.split("\n").filter(Boolean).sort();
    };
    expect(await complete("ev")).toEqual(["events"]);
    expect(await complete("events", "")).toEqual(["list", "search", "show"]);
    expect(await complete("dlq", "retry", "--o")).toEqual(["--override-unsafe"]);
    expect(await complete("--config", "x.json", "events", "list", "--li")).toEqual(["--limit"]);
    expect(await complete("destinations", "")).toEqual([
      "deliveries",
      "enable",
      "list",
      "pause",
      "resume",
    ]);
    const zsh = await runCli(["completion", "zsh"]);
    expect(zsh.stdout).toMatch(
      /^#compdef hookinbox\nautoload -U \+X bashcompinit && bashcompinit\n/,
    );
    expect(zsh.stdout).toContain("complete -F _hookinbox hookinbox");
  });
});
