import type { Command } from "commander";
import { hookinboxError } from "../errors.ts";
import { replayEvent, replayWhere } from "../operations/replay.ts";
import { isPlan, planText } from "./bulk-plan.ts";
import { type CommandHost, collect } from "./command-host.ts";
import { renderTable } from "./table.ts";

const filterKeys = {
  source: "source",
  type: "type",
  status: "status",
  from: "receivedFrom",
  to: "receivedTo",
} as const;

/**
 * Parses `--filter source=stripe,type=invoice.paid,status=dead,from=2026-11-01T00:00:00Z,to=…`
 * (or `all`, the same as `--all`) into the replay operation's fields; their values are checked by
 * its schema.
 *
 * @example
 * ```ts
 * parseReplayFilter("source=stripe,from=2026-11-01T00:00:00Z"); // { source: "stripe", receivedFrom: "2026-11-01T00:00:00Z" }
 * parseReplayFilter("all"); // { all: true }
 * ```
 */
export function parseReplayFilter(text: string): Record<string, string | boolean> {
  // `--filter all` is spelt out, as `--all` is: it asks for everything on purpose.
  if (text.trim() === "all") return { all: true };
  const filter: Record<string, string> = {};
  for (const term of text.split(",")) {
    const eq = term.indexOf("=");
    const key = eq < 0 ? term.trim() : term.slice(0, eq).trim();
    const value = eq < 0 ? "" : term.slice(eq + 1).trim();
    const field = Object.hasOwn(filterKeys, key)
      ? filterKeys[key as keyof typeof filterKeys]
      : undefined;
    if (field === undefined || value === "") {
      throw hookinboxError(
        "HOOKINBOX_USAGE",
        `--filter takes key=value terms separated by commas (source, type, status, from, to), or "all"; got "${term}"`,
      );
    }
    if (field in filter) throw hookinboxError("HOOKINBOX_USAGE", `--filter repeats "${key}"`);
    filter[field] = value;
  }
  return filter;
}

type ReplayResult = Awaited<ReturnType<typeof replayWhere.run>>;

/** How the filter's fields are called on the command line, for usage errors. */
const filterNames = {
  ...Object.fromEntries(
    Object.entries(filterKeys).map(([key, field]) => [field, `--filter ${key}`]),
  ),
  all: "--all",
  dryRun: "--dry-run",
};

/**
 * `hookinbox replay <eventId> [--target T …] [--destination NAME …]` and
 * `hookinbox replay --filter source=…,type=…,status=…,from=…,to=… | --all [--target T …]
 * [--dry-run]`: re-delivers
 * stored events as new deliveries flagged `isReplay`; the originals and their attempt logs stay
 * as they are. `--destination NAME` replays to that forwarding destination (same `webhook-id`).
 * Without either, an event goes to the handlers it was delivered to before (or, if none, to those
 * its source and type route to now). A bulk replay needs a filter or `--all` (not both);
 * `--dry-run` prints how many events and deliveries, per target, it would create, and creates
 * none. A bulk replay counts the matching events first and shows a progress bar on stderr. Builds the inbox from the config (routing needs the handlers), so the
 * sources' secret environment variables must be set.
 *
 * @example
 * ```ts
 * registerReplay(program, host); // hookinbox replay --filter source=stripe,status=dead
 * ```
 */
export function registerReplay(program: Command, host: CommandHost): void {
  host
    .leaf(program, "replay", "re-deliver one event, or every event matching --filter")
    .argument("[eventId]", "the event to replay")
    .option("--filter <terms>", "source=S,type=T,status=S,from=ISO,to=ISO")
    .option("--all", "replay every stored event (instead of --filter)")
    .option("--dry-run", "with --filter or --all: count what would be replayed, per target")
    .option("--target <pattern>", "deliver to this handler pattern (repeatable)", collect)
    .option("--destination <name>", "deliver to this destination (repeatable)", collect)
    .action((eventId: string | undefined, options) => {
      const bulk = options.filter !== undefined || options.all === true;
      if ((eventId === undefined) !== bulk || (eventId !== undefined && options.dryRun))
        throw hookinboxError(
          "HOOKINBOX_USAGE",
          "use `hookinbox replay <eventId>` or `hookinbox replay --filter source=…,type=…,status=…,from=…,to=… | --all [--dry-run]`",
        );
      const targets = { targets: options.target, destination: options.destination };
      if (eventId !== undefined) {
        return host.run(
          options,
          {
            operation: replayEvent,
            access: "inbox",
            names: { id: "<eventId>" },
            text: ({ deliveries }) =>
              deliveries.length === 0
                ? ""
                : renderTable(
                    ["DELIVERY", "TARGET", "STATUS", "REPLAY OF"],
                    deliveries.map((d) => [d.id, d.target, d.status, d.replayOf ?? "-"]),
                  ),
            warning: ({ deliveries }) =>
              deliveries.length > 0
                ? null
                : `nothing replayed: event ${eventId} routes to no configured handler (use --target)`,
            exitCode: ({ deliveries }) => (deliveries.length > 0 ? 0 : 1),
          },
          { id: eventId, ...targets },
        );
      }
      return host.run(
        options,
        {
          operation: replayWhere,
          access: "inbox",
          names: filterNames,
          ...(options.dryRun
            ? {}
            : { progress: { label: "events replayed", done: (r: ReplayResult) => r.events } }),
          text: (r: ReplayResult) =>
            isPlan(r)
              ? planText(r, "replay")
              : `replayed ${r.events} event${r.events === 1 ? "" : "s"}: ${r.deliveries} new deliver${r.deliveries === 1 ? "y" : "ies"}`,
        },
        {
          ...(options.filter === undefined ? {} : parseReplayFilter(options.filter)),
          ...(options.all === true ? { all: true } : {}),
          ...(options.dryRun ? { dryRun: true } : {}),
          ...targets,
        },
      );
    });
}
