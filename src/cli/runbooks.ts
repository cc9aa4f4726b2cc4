import type { Command } from "commander";
import type { Runbook } from "../operations/runbook-lookup.ts";
import { listRunbooks } from "../operations/runbooks.ts";
import { oneLine } from "./cli-args.ts";
import type { CommandHost } from "./command-host.ts";
import { renderTable } from "./table.ts";

/** The configured runbooks as a table (the dashboard's runbook list). */
function runbooksTable(result: { items: readonly Runbook[] }): string {
  if (result.items.length === 0) return "no runbooks configured (see `runbooks` in the config)";
  return renderTable(
    ["PATTERN", "OWNER", "SAFE TO REPROCESS", "NOTES", "LINK"],
    result.items.map((r) => [
      r.pattern,
      r.owner ?? "-",
      r.safeToReprocess === null ? "not said" : r.safeToReprocess ? "yes" : "NO",
      r.notes === null ? "-" : oneLine(r.notes, 80),
      r.link ?? "-",
    ]),
  );
}

/**
 * `hookinbox runbooks list [--json]`: every configured runbook in configured order (the
 * operation behind `GET /api/runbooks`).
 *
 * @example
 * ```ts
 * registerRunbooks(program, host); // hookinbox runbooks list --json
 * ```
 */
export function registerRunbooks(program: Command, host: CommandHost): void {
  const runbooks = host.group(program, "runbooks", "what the on-call person reads: list");
  host
    .leaf(runbooks, "list", listRunbooks.summary)
    .action((options) =>
      host.run(options, { operation: listRunbooks, access: "read", text: runbooksTable }, {}),
    );
}
