import { Command } from "commander";
import { hookinboxError } from "../errors.ts";
import { registerAudit } from "./audit.ts";
import type { CommandHost } from "./command-host.ts";
import { completionScript } from "./completion.ts";
import { registerDestinations } from "./destinations.ts";
import { registerDlq } from "./dlq.ts";
import { registerEffects } from "./effects.ts";
import { registerEvents } from "./events.ts";
import { registerListen } from "./listen.ts";
import { migrateCommand } from "./migrate.ts";
import { registerOverview } from "./overview.ts";
import { probeCommand } from "./probe.ts";
import { registerReceipts } from "./receipts.ts";
import { registerReplay } from "./replay.ts";
import { retentionCommand } from "./retention.ts";
import { registerRetry } from "./retry.ts";
import { registerRunbooks } from "./runbooks.ts";
import { sendCommand } from "./send.ts";
import { startCommand } from "./start.ts";
import { registerStuck } from "./stuck.ts";
import { registerTransform } from "./transform.ts";
import { workCommand } from "./work.ts";

const config = "-c, --config <file>";
const configHelp = "config file (default: hookinbox.config.* in this folder)";

/**
 * A command that parses its own arguments (start, work, migrate, send, probe, retention): commander
 * gives it `--help` and completion from the options declared here, then hands it the raw
 * arguments after its name; its own strict parser still refuses what it does not know.
 */
function passThrough(
  program: Command,
  host: CommandHost,
  argv: readonly string[],
  name: string,
  run: (args: string[]) => Promise<number>,
): Command {
  return program
    .command(name)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async () => host.exit(await run(argv.slice(argv.indexOf(name) + 1))));
}

/**
 * The `hookinbox` command tree on commander 14: every command and subcommand answers `--help`,
 * errors come back as CommanderError (main prints them as one HOOKINBOX_USAGE line) and nothing
 * calls process.exit, so tests run it in-process.
 *
 * Why commander: the most used and actively released Node argument parser, no dependencies,
 * typed, per-subcommand help, exitOverride and configureOutput for in-process use, and a command
 * tree that completion is generated from. 14.x because 15 needs Node 22.12 and hookinbox
 * supports Node 20.10+. (citty is pre-1.0; clipanion's last stable release is 3.2.1.)
 *
 * @example
 * ```ts
 * const program = buildProgram(host, argv, version);
 * await program.parseAsync(argv, { from: "user" });
 * ```
 */
export function buildProgram(host: CommandHost, argv: readonly string[], version: string): Command {
  const { ctx } = host;
  const program = new Command("hookinbox")
    .description("an inbox for webhooks")
    .version(`hookinbox ${version}`, "-v, --version", "print the version")
    .option("--debug", "print the stack trace of a failure (with any command)")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => ctx.stdout.write(text),
      writeErr: (text) => ctx.stderr.write(text),
      // main prints the one-line HOOKINBOX_USAGE error itself.
      outputError: () => undefined,
    })
    .showSuggestionAfterError(true)
    .addHelpText(
      "after",
      "\nConfig: hookinbox.config.ts | .mjs | .js | .json in the current folder, or --config.\nEvery command answers --help; `hookinbox completion bash|zsh` prints shell completion.",
    );

  passThrough(program, host, argv, "start", (args) => startCommand(ctx, args))
    .description("run the gateway (default: embedded SQLite)")
    .option(config, configHelp)
    .option("-p, --port <n>", "port to listen on (0: any free port)")
    .option("--host <host>", "address to listen on")
    .option("--role <role>", "all, ingest or worker");
  passThrough(program, host, argv, "work", (args) => workCommand(ctx, args))
    .description("process what is due for a bounded time, then exit (cron, CronJob, systemd timer)")
    .option(config, configHelp)
    .option("--once", "required: run once and exit")
    .option("--max-time <duration>", "stop claiming after this long (default 50s)")
    .option("--grace <duration>", "then let running handlers finish this long (default 5s)")
    .option("--concurrency <n>", "handlers at once (default worker.concurrency)")
    .option("--json", "print one JSON object instead of text");
  passThrough(program, host, argv, "migrate", (args) => migrateCommand(ctx, args))
    .description("apply store migrations")
    .option(config, configHelp);
  passThrough(program, host, argv, "send", (args) => sendCommand(ctx, args))
    .description(
      "sign and post a test event to a configured source, or with --to a provider's signed sample to any receiver",
    )
    .argument("<source-or-provider>", "a configured source (or, with --to, a provider)")
    .option(config, configHelp)
    .option("--url <url>", "the gateway to post to (default: the configured http address)")
    .option("--to <url>", "post a provider's sample to any receiver")
    .option("--secret <secret>", "with --to: the signing secret")
    .option("--private-key <file>", "with --to: a private key file (key-signed providers)")
    .option("--type <type>", "event type")
    .option("--id <id>", "provider event id")
    .option("--data <file>", "JSON to put in the sample")
    .option("--times <n>", "send the same event this many times (duplicates)")
    .option("--distinct", "without --to: with --times, a new event each time")
    .option("--parallel <n>", "this many at once")
    .option("--delay <ms>", "wait between sends")
    .option("--replay-of <id>", "resend as a replay of this id")
    .option("--timeout <ms>", "per request")
    .option("--json", "print one JSON object instead of text");
  passThrough(program, host, argv, "probe", (args) => probeCommand(ctx, args))
    .description("test a receiver the way providers treat it (exit 1 on a failed check)")
    .argument("<url>", "the receiver")
    .option("--provider <name>", "the provider to act as")
    .option("--secret <secret>", "its signing secret")
    .option("--effects <url-or-command>", "where to read how often the receiver's effect ran")
    .option("--budget <ms>", "how fast the receiver must answer")
    .option("--parallel <n>", "concurrent duplicates")
    .option("--timeout <ms>", "per request")
    .option("--quiet <ms>", "quiet period")
    .option("--settle <ms>", "settle time before reading effects")
    .option("--json", "print JSON instead of text");
  registerListen(program, host);
  registerOverview(program, host);
  registerEvents(program, host);
  registerReceipts(program, host);
  registerReplay(program, host);
  registerDlq(program, host);
  registerRetry(program, host);
  registerDestinations(program, host);
  registerStuck(program, host);
  registerEffects(program, host);
  registerAudit(program, host);
  registerRunbooks(program, host);
  registerTransform(program, host);
  const retention = program
    .command("retention")
    .description("payload retention")
    .argument("[command]")
    .action((given: string | undefined) => {
      throw hookinboxError(
        "HOOKINBOX_USAGE",
        `${given === undefined ? "" : `unknown command "retention ${given}"; `}use hookinbox retention run (see hookinbox retention --help)`,
      );
    });
  passThrough(retention, host, argv, "run", (args) => retentionCommand(ctx, ["run", ...args]))
    .description(
      "purge payloads older than retention.payloads (finished events only; proofs still verify)",
    )
    .option(config, configHelp)
    .option("--dry-run", "count, change nothing");
  program
    .command("completion")
    .description('print a shell completion script: eval "$(hookinbox completion bash)"')
    .argument("<shell>", "bash or zsh")
    .action((shell: string) => {
      if (shell !== "bash" && shell !== "zsh")
        throw hookinboxError("HOOKINBOX_USAGE", `completion is for bash or zsh (got "${shell}")`);
      ctx.stdout.write(completionScript(program, shell));
    });
  return program;
}
