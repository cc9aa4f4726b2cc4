import type { Command } from "commander";
import { hookinboxError } from "../errors.ts";
import { listReceipts } from "../operations/events.ts";
import type { ReceiptPage, ReceiptRecord } from "../store/types.ts";
import { oneLine } from "./cli-args.ts";
import type { CommandHost } from "./command-host.ts";
import { renderTable } from "./table.ts";

/** What became of a request: a new event, a duplicate, or its rejection's status and code. */
function outcome(r: ReceiptRecord): string {
  if (r.eventId === null) return `rejected ${r.status ?? "-"} ${r.code ?? "-"}`;
  return r.duplicate ? "duplicate" : "new";
}

/** `receipts list` as a table, with the cursor of the next page. */
function receiptsTable(page: ReceiptPage): string {
  const table = renderTable(
    ["ID", "SOURCE", "RECEIVED", "OUTCOME", "EVENT", "FROM", "SIZE", "HEADER NAMES"],
    page.items.map((r) => [
      r.id,
      r.source,
      r.receivedAt,
      outcome(r),
      r.eventId ?? "-",
      r.remoteAddress ?? "-",
      r.size === null ? "-" : String(r.size),
      r.headerNames === null ? "-" : oneLine(r.headerNames.join(","), 80),
    ]),
  );
  return page.nextCursor ? `${table}\nmore: --cursor ${page.nextCursor}` : table;
}

/**
 * `hookinbox receipts list [--rejected|--accepted] [--source] [--limit] [--cursor] [--json]`:
 * the requests that arrived, newest first (the operation behind `GET /api/receipts`); with
 * `--rejected`, the rejected requests with their status, code, size and header names.
 *
 * @example
 * ```ts
 * registerReceipts(program, host); // hookinbox receipts list --rejected --source stripe
 * ```
 */
export function registerReceipts(program: Command, host: CommandHost): void {
  const receipts = host.group(program, "receipts", "requests that arrived: list");
  host
    .paged(host.leaf(receipts, "list", listReceipts.summary))
    .option("--rejected", "only rejected requests (status, code, size, header names)")
    .option("--accepted", "only accepted requests (new events and duplicates)")
    .option("--source <name>", "only this source")
    .action((options) => {
      if (options.rejected && options.accepted)
        throw hookinboxError("HOOKINBOX_USAGE", "--rejected and --accepted exclude each other");
      const rejected = options.rejected ? "true" : options.accepted ? "false" : undefined;
      return host.run(
        options,
        {
          operation: listReceipts,
          access: "read",
          names: { rejected: "--rejected/--accepted" },
          text: receiptsTable,
        },
        { rejected, source: options.source, limit: options.limit, cursor: options.cursor },
      );
    });
}
