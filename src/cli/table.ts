/** C0 controls (ESC, BEL, CR, LF, …), DEL, C1 controls, and line separators and bidi controls. */
function isControl(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/**
 * Makes text safe for a terminal: control characters become visible `\x1b`-style (or `\u202e`)
 * escapes, so an event type cannot clear the screen, ring the bell, rewrite a line or fake rows.
 *
 * @example
 * ```ts
 * escapeControl("invoice\u001b[2J.paid"); // "invoice\\x1b[2J.paid"
 * ```
 */
export function escapeControl(text: string): string {
  let out = "";
  for (const c of text) {
    const code = c.charCodeAt(0);
    if (!isControl(code)) out += c;
    else if (code <= 0xff) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += `\\u${code.toString(16).padStart(4, "0")}`;
  }
  return out;
}

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
