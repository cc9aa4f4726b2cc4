import { parseArgs } from "node:util";
import { z } from "zod";
import { formatIssues } from "../config/format-issues.ts";
import { loadConfigFile } from "../config/index.ts";
import { destinationName, destinationSchema } from "../config/schema.ts";
import { hookinboxError } from "../errors.ts";
import {
  type ConfiguredDestination,
  changeDestinationState,
  type DestinationStatus,
  destinationStatuses,
  unknownDestination,
} from "../forward/destination-admin.ts";
import type { DeliveryStatus } from "../store/queue-types.ts";
import { oneLine, parseLimitOption } from "./cli-args.ts";
import { type CliContext, openConfiguredStore } from "./context.ts";
import { renderTable } from "./table.ts";

const usage =
  "use `hookinbox destinations list`, `hookinbox destinations pause <name> [--reason TEXT]`, `resume <name>`, `enable <name>` or `deliveries <name> [--status S] [--limit N] [--cursor C]` (each with [--json])";

const deliveryStatuses = ["pending", "blocked", "running", "done", "stale", "dead"];

/**
 * The config's destinations, names and URLs only (no secret is resolved, so none must be set).
 *
 * @example
 * ```ts
 * const configured = await loadDestinations(ctx, values.config);
 * ```
 */
export async function loadDestinations(
  ctx: CliContext,
  configPath: string | undefined,
): Promise<ConfiguredDestination[]> {
  const loaded = await loadConfigFile({ cwd: ctx.cwd, path: configPath });
  const raw = (loaded?.config as { destinations?: unknown } | undefined)?.destinations;
  const schema = z.record(destinationName, destinationSchema).optional();
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const lines = formatIssues(schema, raw, parsed.error.issues).map((l) => `destinations.${l}`);
    throw hookinboxError("HOOKINBOX_CONFIG_INVALID", lines.join("; "));
  }
  return Object.entries(parsed.data ?? {}).map(([name, d]) => ({ name, url: d.url }));
}

function statusRow(d: DestinationStatus): string[] {
  const circuit = d.circuit === "closed" ? "closed" : `${d.circuit} (${d.failures} failures)`;
  return [
    d.name,
    d.url,
    d.state,
    circuit,
    String(d.inFlight),
    String(d.pending),
    String(d.dead),
    oneLine(d.reason, 50),
  ];
}

const statusHeader = ["NAME", "URL", "STATE", "CIRCUIT", "IN FLIGHT", "PENDING", "DEAD", "REASON"];

/**
 * `hookinbox destinations list|pause|resume|enable|deliveries`, on the store directly (the
 * running gateway sees the change at its next claim, in every process):
 * - `list`: each configured destination's state (active, paused, disabled by a 410), circuit,
 *   deliveries in flight, pending and dead;
 * - `pause <name> [--reason TEXT]`: its work waits (nothing fails) until `resume <name>`;
 * - `enable <name>`: brings back a destination disabled by a 410 Gone;
 * - `deliveries <name> [--status S] [--limit N] [--cursor C]`: its deliveries, newest first.
 *
 * @example
 * ```ts
 * await destinationsCommand(ctx, ["pause", "app", "--reason", "deploying"]);
 * ```
 */
export async function destinationsCommand(ctx: CliContext, args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      reason: { type: "string" },
      status: { type: "string" },
      limit: { type: "string" },
      cursor: { type: "string" },
      json: { type: "boolean" },
    },
  });
  const name = positionals[0];
  const named = action !== "list";
  if (
    !["list", "pause", "resume", "enable", "deliveries"].includes(action ?? "") ||
    positionals.length !== (named ? 1 : 0)
  )
    throw hookinboxError("HOOKINBOX_USAGE", usage);
  if (values.reason !== undefined && action !== "pause")
    throw hookinboxError("HOOKINBOX_USAGE", "--reason goes with `destinations pause`");
  if (values.status !== undefined && !deliveryStatuses.includes(values.status))
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      `--status takes ${deliveryStatuses.join(", ")} (got "${values.status}")`,
    );
  const limit = parseLimitOption(values.limit);
  const configured = await loadDestinations(ctx, values.config);
  if (named && !configured.some((d) => d.name === name))
    throw unknownDestination(configured, name!);
  const store = await openConfiguredStore(ctx, values.config);
  const print = (payload: unknown, table: string) =>
    ctx.stdout.write(`${values.json ? JSON.stringify(payload) : table}\n`);
  try {
    if (action === "list") {
      const items = await destinationStatuses(store, configured, Date.now());
      print({ items }, renderTable(statusHeader, items.map(statusRow)));
      return 0;
    }
    if (action === "deliveries") {
      const page = await store.listDeliveries({
        target: name!,
        status: values.status as DeliveryStatus | undefined,
        limit,
        cursor: values.cursor,
      });
      const rows = page.items.map((d) => [
        d.id,
        d.eventId,
        d.status,
        String(d.attempts),
        d.runAt,
        d.isReplay ? "replay" : "-",
        oneLine(d.lastError, 60),
      ]);
      const more = page.nextCursor ? `\nmore: --cursor ${page.nextCursor}` : "";
      print(
        page,
        `${renderTable(["ID", "EVENT", "STATUS", "ATTEMPTS", "RUN AT", "REPLAY", "LAST ERROR"], rows)}${more}`,
      );
      return 0;
    }
    const status = await changeDestinationState(
      store,
      configured,
      name!,
      action as "pause" | "resume" | "enable",
      values.reason ?? null,
      Date.now(),
    );
    print(status, `${name}: ${status.state}${status.reason ? ` (${status.reason})` : ""}`);
    return 0;
  } finally {
    await store.close();
  }
}
