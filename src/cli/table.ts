import { escapeControl } from "./terminal.ts";

/**
 * Renders rows as a plain text table with a header line, columns padded to their widest cell.
 *
 * @example
 * ```ts
 * renderTable(["ID", "TYPE"], [["evt_1", "invoice.paid"]]);
 * ```
 */
export function renderTable(
  header: readonly string[],
  unsafeRows: ReadonlyArray<readonly string[]>,
): string {
  // Cells come from senders (event types, keys): never let them drive the operator's terminal.
  const rows = unsafeRows.map((row) => row.map(escapeControl));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}
