import type { Command } from "commander";
import { dashboardSearch } from "../operations/dashboard.ts";
import type { EventJson } from "../operations/events.ts";
import { listEvents, showEvent } from "../operations/events.ts";
import { eventStatuses } from "../operations/fields.ts";
import type { Runbook } from "../operations/runbook-lookup.ts";
import type { DeliveryView } from "../store/queue-types.ts";
import type { EventPage } from "../store/types.ts";
import { oneLine } from "./cli-args.ts";
import type { CommandHost } from "./command-host.ts";
import { renderTable } from "./table.ts";

/** `events list` as a table, with the cursor of the next page. */
function eventsTable(page: EventPage): string {
  const rows = page.items.map((e) => [
    e.id,
    e.source,
    e.type ?? "-",
    e.status,
    e.receivedAt,
    String(e.receiptCount),
    e.dedupKey,
  ]);
  const table = renderTable(
    ["ID", "SOURCE", "TYPE", "STATUS", "RECEIVED", "RECEIPTS", "DEDUP KEY"],
    rows,
  );
  return page.nextCursor ? `${table}\nmore: --cursor ${page.nextCursor}` : table;
}

/** A delivery and its attempts, errors included, as `events show` prints them. */
function deliveryLines(d: DeliveryView): string[] {
  const flags = [d.isReplay ? `replay of ${d.replayOf ?? "?"}` : null].filter(Boolean).join(", ");
  const lines = [
    `  ${d.id}  ${d.target}  ${d.status}  attempts ${d.attempts}  due ${d.runAt}${flags ? `  (${flags})` : ""}`,
  ];
  if (d.lastError) lines.push(`    last error: ${oneLine(d.lastError, 200)}`);
  for (const a of d.attemptLog ?? []) {
    const ms = a.endedAt === null ? "" : `  ${Date.parse(a.endedAt) - Date.parse(a.startedAt)} ms`;
    const sent = a.response?.filtered
      ? "  filtered: nothing sent"
      : a.response?.request
        ? `  sent ${a.response.request.bytes} bytes sha256 ${a.response.request.sha256.slice(0, 12)}`
        : "";
    lines.push(
      `    #${a.attempt}  ${a.startedAt}  ${a.outcome}${ms}  ${a.workerId ?? "-"}${sent}${a.errorMessage ? `  ${oneLine(a.errorMessage, 160)}` : ""}`,
    );
  }
  return lines;
}

/** The runbook of the event's type, if one is configured. */
function runbookLines(runbook: Runbook | null): string[] {
  if (!runbook) return ["runbook: none configured for this type"];
  return [
    `runbook (${runbook.pattern}):`,
    `  owner: ${runbook.owner ?? "-"}`,
    `  safe to reprocess: ${runbook.safeToReprocess === null ? "not said" : runbook.safeToReprocess ? "yes" : "NO"}`,
    ...(runbook.notes ? [`  notes: ${runbook.notes}`] : []),
    ...(runbook.link ? [`  link: ${runbook.link}`] : []),
  ];
}

/** `events show` as text: the request, receipts, deliveries with attempts, runbook, body. */
function eventText(event: EventJson): string {
  const bytes = Buffer.from(event.body.base64, "base64").byteLength;
  return [
    `id:           ${event.id}`,
    `source:       ${event.source}`,
    `dedup key:    ${event.dedupKey}`,
    `type:         ${event.type ?? "-"}`,
    `status:       ${event.status}`,
    `received at:  ${event.receivedAt}`,
    `occurred at:  ${event.occurredAt ?? "-"}`,
    `ordering key: ${event.orderingKey ?? "-"}`,
    `version:      ${event.version ?? "-"}`,
    "headers:",
    ...event.headers.map(([n, v]) => `  ${n}: ${v}`),
    `receipts (${event.receipts.length}): received ${event.receipts.length} time${event.receipts.length === 1 ? "" : "s"}`,
    ...event.receipts.map(
      (r) =>
        `  ${r.receivedAt}  ${r.duplicate ? "duplicate" : "first    "}  from ${r.remoteAddress ?? "-"}  secret #${r.secretIndex ?? "-"}`,
    ),
    `deliveries (${event.deliveries.length}):`,
    ...event.deliveries.flatMap((d) => deliveryLines(d)),
    ...runbookLines(event.runbook),
    `body (${bytes} bytes):`,
    event.body.text ?? `(not UTF-8; base64) ${event.body.base64}`,
  ].join("\n");
}

/**
 * `hookinbox events list|search|show`: stored events, read without migrating. `search` finds
 * events by id or dedup key across the configured sources (the dashboard's search).
 *
 * @example
 * ```ts
 * registerEvents(program, host); // hookinbox events list --status dead --json
 * ```
 */
export function registerEvents(program: Command, host: CommandHost): void {
  const events = host.group(program, "events", "stored events: list, search and show");
  host
    .paged(host.leaf(events, "list", listEvents.summary))
    .option("--source <name>", "only this source")
    .option("--type <type>", "only this event type")
    .option("--status <status>", `only this status: ${eventStatuses.join(", ")}`)
    .action((options) =>
      host.run(options, { operation: listEvents, access: "read", text: eventsTable }, options),
    );
  host
    .leaf(events, "search", `${dashboardSearch.summary} (exit 1 when none matches)`)
    .argument("<query>", "an event id, or a dedup key (the provider's event id)")
    .option("--source <name>", "only this source (default: every configured source)")
    .action((query: string, options) =>
      host.run(
        options,
        {
          operation: dashboardSearch,
          access: "read",
          names: { q: "<query>" },
          text: ({ eventIds }) =>
            eventIds.length === 0 ? "no event has that id or dedup key" : eventIds.join("\n"),
          exitCode: ({ eventIds }) => (eventIds.length === 0 ? 1 : 0),
        },
        { q: query, source: options.source },
      ),
    );
  host
    .leaf(
      events,
      "show",
      "one event: request, receipts, deliveries with attempts and errors, runbook, body",
    )
    .argument("<id>", "event id")
    .action((id: string, options) =>
      host.run(
        options,
        { operation: showEvent, access: "read", names: { id: "<id>" }, text: eventText },
        { id },
      ),
    );
}
