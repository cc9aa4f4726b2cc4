import { parseArgs } from "node:util";
import { hookinboxError } from "../errors.ts";
import type { Runbook } from "../operations/runbooks.ts";
import type { DeliveryView } from "../store/queue-types.ts";
import { oneLine } from "./cli-args.ts";
import { type CliContext, loadRunbooks, openConfiguredStore } from "./context.ts";
import { renderTable } from "./table.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * `hookinbox events list [--source S] [--type T] [--status S] [--limit N] [--cursor C] [--json]`
 * and `hookinbox events show <id> [--json]`, reading the store directly.
 *
 * @example
 * ```ts
 * await eventsCommand(ctx, ["list", "--json"]);
 * ```
 */
export async function eventsCommand(ctx: CliContext, args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      source: { type: "string" },
      type: { type: "string" },
      status: { type: "string" },
      limit: { type: "string" },
      cursor: { type: "string" },
      json: { type: "boolean" },
    },
  });
  if (action !== "list" && action !== "show") {
    throw hookinboxError(
      "HOOKINBOX_USAGE",
      "use `hookinbox events list` or `hookinbox events show <id>`",
    );
  }
  const store = await openConfiguredStore(ctx, values.config);
  try {
    if (action === "list") {
      const limit = values.limit === undefined ? undefined : Number(values.limit);
      const page = await store.listEvents({
        source: values.source,
        type: values.type,
        status: values.status,
        limit,
        cursor: values.cursor,
      });
      if (values.json) ctx.stdout.write(`${JSON.stringify(page)}\n`);
      else {
        const rows = page.items.map((e) => [
          e.id,
          e.source,
          e.type ?? "-",
          e.status,
          e.receivedAt,
          String(e.receiptCount),
          e.dedupKey,
        ]);
        ctx.stdout.write(
          `${renderTable(["ID", "SOURCE", "TYPE", "STATUS", "RECEIVED", "RECEIPTS", "DEDUP KEY"], rows)}\n`,
        );
        if (page.nextCursor) ctx.stdout.write(`more: --cursor ${page.nextCursor}\n`);
      }
      return 0;
    }
    const id = positionals[0];
    if (!id)
      throw hookinboxError("HOOKINBOX_USAGE", "`hookinbox events show <id>` needs an event id");
    const event = await store.getEvent(id);
    if (!event) throw hookinboxError("HOOKINBOX_EVENT_NOT_FOUND", id);
    let text: string | null;
    try {
      text = utf8.decode(event.body);
    } catch {
      text = null;
    }
    const base64 = Buffer.from(event.body).toString("base64");
    const runbooks = await loadRunbooks(ctx, values.config);
    const runbook = runbooks.for(event.source, event.type);
    if (values.json) {
      ctx.stdout.write(`${JSON.stringify({ ...event, body: { base64, text }, runbook })}\n`);
      return 0;
    }
    const lines = [
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
      ...runbookLines(runbook),
      `body (${event.body.byteLength} bytes):`,
      text ?? `(not UTF-8; base64) ${base64}`,
    ];
    ctx.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  } finally {
    await store.close();
  }
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
    lines.push(
      `    #${a.attempt}  ${a.startedAt}  ${a.outcome}${ms}  ${a.workerId ?? "-"}${a.errorMessage ? `  ${oneLine(a.errorMessage, 160)}` : ""}`,
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
