import { parseArgs } from "node:util";
import type { HookinboxConfig } from "../config/index.ts";
import { hookinboxError } from "../errors.ts";
import { configuredDestinations, unknownDestination } from "../forward/destination-admin.ts";
import { createInbox } from "../inbox.ts";
import type { ReplayFilter } from "../store/queue-types.ts";
import { type CliContext, loadRawConfig } from "./context.ts";
import { progressBar } from "./progress.ts";
import { renderTable } from "./table.ts";

const eventStatuses = ["received", "ignored", "pending", "done", "dead"];

/**
 * Parses `--filter source=stripe,type=invoice.paid,status=dead,from=2026-11-01T00:00:00Z,to=…`
 * (`from` inclusive, `to` exclusive, on the time the event was first received), or `all`.
 *
 * @example
 * ```ts
 * parseReplayFilter("source=stripe,status=dead"); // { source: "stripe", status: "dead" }
 * ```
 */
export function parseReplayFilter(text: string): ReplayFilter {
  if (text.trim() === "all") return {};
  const filter: Record<string, string | number> = {};
  const seen = new Set<string>();
  for (const term of text.split(",")) {
    const eq = term.indexOf("=");
    const key = eq < 0 ? term.trim() : term.slice(0, eq).trim();
    const value = eq < 0 ? "" : term.slice(eq + 1).trim();
    if (!["source", "type", "status", "from", "to"].includes(key) || value === "") {
      throw hookinboxError(
        "HOOKINBOX_USAGE",
        `--filter takes key=value terms separated by commas (source, type, status, from, to), or "all"; got "${term}"`,
      );
    }
    if (seen.has(key)) throw hookinboxError("HOOKINBOX_USAGE", `--filter repeats "${key}"`);
    seen.add(key);
    if (key === "from" || key === "to") {
      const ms = Date.parse(value);
      if (Number.isNaN(ms)) {
        throw hookinboxError(
          "HOOKINBOX_USAGE",
          `--filter ${key} takes an ISO 8601 time like 2026-11-01T00:00:00Z (got "${value}")`,
        );
      }
      filter[key === "from" ? "receivedFrom" : "receivedTo"] = ms;
    } else {
      if (key === "status" && !eventStatuses.includes(value)) {
        throw hookinboxError(
          "HOOKINBOX_USAGE",
          `--filter status is an event status: ${eventStatuses.join(", ")} (got "${value}")`,
        );
      }
      filter[key] = value;
    }
  }
  return filter as ReplayFilter;
}

/**
 * `hookinbox replay <eventId> [--target T …] [--destination NAME …] [--json]` and
 * `hookinbox replay --filter source=…,type=…,status=…,from=…,to=… [--target T …] [--json]`:
 * re-delivers stored events as new deliveries flagged `isReplay`; the originals and their attempt
 * logs stay as they are. `--destination NAME` replays to that forwarding destination only (with
 * the same `webhook-id` as the original). Without `--target` or `--destination`, an event goes to the handlers it was delivered to
 * before (or, if none, to those its source and type route to now). A bulk replay counts the
 * matching events first and shows a progress bar on stderr when it is a terminal.
 *
 * Builds the inbox from the config (routing needs the handlers), so the sources' secret
 * environment variables must be set. A running worker picks the new deliveries up at its next
 * poll (`worker.pollInterval`, default 1s).
 *
 * @example
 * ```ts
 * await replayCommand(ctx, ["evt_01J…", "--target", "stripe:invoice.*"]);
 * await replayCommand(ctx, ["--filter", "source=stripe,status=dead"]);
 * ```
 */
export async function replayCommand(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      filter: { type: "string" },
      target: { type: "string", multiple: true },
      destination: { type: "string", multiple: true },
      json: { type: "boolean" },
    },
  });
  const eventId = positionals[0];
  if (positionals.length > 1 || (eventId === undefined) === (values.filter === undefined)) {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "use `hookinbox replay <eventId>` or `hookinbox replay --filter source=…,type=…,status=…,from=…,to=…`",
    );
  }
  const filter = values.filter === undefined ? undefined : parseReplayFilter(values.filter);
  const raw = await loadRawConfig(ctx, values.config);
  // A config file is checked at run time (resolveConfig), not by its static type.
  const inbox = createInbox(raw.config as HookinboxConfig, { env: ctx.env });
  try {
    const destinations = values.destination ?? [];
    for (const name of destinations)
      if (!inbox.config.destinations.has(name))
        throw unknownDestination(configuredDestinations(inbox.config.destinations), name);
    const targets =
      values.target || values.destination ? [...(values.target ?? []), ...destinations] : undefined;
    await inbox.ready();
    if (eventId !== undefined) {
      const deliveries = await inbox.replay(eventId, targets ? { targets } : {});
      if (values.json) {
        ctx.stdout.write(`${JSON.stringify({ deliveries })}\n`);
      } else if (deliveries.length > 0) {
        const rows = deliveries.map((d) => [d.id, d.target, d.status, d.replayOf ?? "-"]);
        ctx.stdout.write(`${renderTable(["DELIVERY", "TARGET", "STATUS", "REPLAY OF"], rows)}\n`);
      }
      if (deliveries.length === 0) {
        ctx.stderr.write(
          `hookinbox: nothing replayed: event ${eventId} routes to no configured handler (use --target)\n`,
        );
        return 1;
      }
      return 0;
    }
    const matching = await inbox.store.countEvents(filter!);
    const progress = progressBar(ctx.stderr, matching, "events replayed");
    const result = await inbox.replayWhere(filter!, {
      ...(targets ? { targets } : {}),
      onProgress: (done) => progress.update(done),
    });
    progress.finish(result.events);
    if (values.json) ctx.stdout.write(`${JSON.stringify(result)}\n`);
    else
      ctx.stdout.write(
        `replayed ${result.events} event${result.events === 1 ? "" : "s"}: ${result.deliveries} new deliver${result.deliveries === 1 ? "y" : "ies"}\n`,
      );
    return 0;
  } finally {
    await inbox.close();
  }
}
