import type { Command } from "commander";
import type { DestinationStatus } from "../forward/destination-admin.ts";
import {
  destinationDeliveries,
  enableDestination,
  listDestinations,
  pauseDestination,
  resumeDestination,
} from "../operations/destinations.ts";
import { deliveryStatuses } from "../operations/fields.ts";
import { oneLine } from "./cli-args.ts";
import type { CommandHost } from "./command-host.ts";
import { renderTable } from "./table.ts";

function statusRow(d: DestinationStatus): string[] {
  const circuit = d.failures > 0 ? `${d.circuit} (${d.failures} down in a row)` : d.circuit;
  return [
    d.name,
    d.type,
    d.url,
    d.state,
    circuit,
    String(d.inFlight),
    String(d.pending),
    String(d.dead),
    oneLine(d.reason, 50),
  ];
}

const statusHeader = [
  "NAME",
  "TYPE",
  "URL",
  "STATE",
  "CIRCUIT",
  "IN FLIGHT",
  "PENDING",
  "DEAD",
  "REASON",
];

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
 * registerDestinations(program, host); // hookinbox destinations pause app --reason deploying
 * ```
 */
export function registerDestinations(program: Command, host: CommandHost): void {
  const group = host.group(program, "destinations", "forwarding destinations: state and control");
  host.leaf(group, "list", listDestinations.summary).action((options) =>
    host.run(
      options,
      {
        operation: listDestinations,
        access: "read",
        text: ({ items }) => renderTable(statusHeader, items.map(statusRow)),
      },
      {},
    ),
  );
  const change = (operation: typeof pauseDestination, name: string, description: string) => {
    const leaf = host.leaf(group, name, description).argument("<name>", "destination name");
    if (name === "pause") leaf.option("--reason <text>", "why, shown in lists");
    leaf.action((destination: string, options) =>
      host.run(
        options,
        {
          operation,
          access: "write",
          names: { name: "<name>" },
          text: (status) =>
            `${destination}: ${status.state}${status.reason ? ` (${status.reason})` : ""}`,
        },
        { name: destination, reason: options.reason },
      ),
    );
  };
  change(pauseDestination, "pause", pauseDestination.summary);
  change(resumeDestination, "resume", resumeDestination.summary);
  change(enableDestination, "enable", enableDestination.summary);
  host
    .paged(host.leaf(group, "deliveries", destinationDeliveries.summary))
    .argument("<name>", "destination name")
    .option("--status <status>", `only this status: ${deliveryStatuses.join(", ")}`)
    .action((name: string, options) =>
      host.run(
        options,
        {
          operation: destinationDeliveries,
          access: "read",
          names: { name: "<name>" },
          text: (page) => {
            const rows = page.items.map((d) => [
              d.id,
              d.eventId,
              d.status,
              String(d.attempts),
              d.runAt,
              d.isReplay ? "replay" : "-",
              oneLine(d.lastError, 60),
            ]);
            const table = renderTable(
              ["ID", "EVENT", "STATUS", "ATTEMPTS", "RUN AT", "REPLAY", "LAST ERROR"],
              rows,
            );
            return page.nextCursor ? `${table}\nmore: --cursor ${page.nextCursor}` : table;
          },
        },
        { name, status: options.status, limit: options.limit, cursor: options.cursor },
      ),
    );
}
