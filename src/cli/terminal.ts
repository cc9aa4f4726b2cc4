/**
 * Characters that must never reach a terminal from data: C0 controls (ESC, BEL, CR, LF, …), DEL,
 * C1 controls, the line and paragraph separators, and the bidi marks, embeddings, overrides and
 * isolates (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069) that reorder what is shown.
 */
function isControl(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

const visible = (code: number) =>
  code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;

/**
 * Makes data safe for a terminal: every control character, newlines and tabs included, becomes a
 * visible `\x1b`-style (or `\u202e`) escape, so an event type cannot clear the screen, ring the
 * bell, rewrite a line, fake rows or reorder what is shown.
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
    out += isControl(code) ? visible(code) : c;
  }
  return out;
}

/**
 * A copy of a result with escapeControl applied to every string in it (arrays and plain objects
 * walked; numbers, booleans, null and other objects kept): what a command's text output is built
 * from, so no field a sender chose can carry a control character into it.
 *
 * @example
 * ```ts
 * escapeStrings({ items: [{ type: "a\u001bb" }] }); // { items: [{ type: "a\\x1bb" }] }
 * ```
 */
export function escapeStrings<T>(value: T): T {
  if (typeof value === "string") return escapeControl(value) as T;
  if (Array.isArray(value)) return value.map(escapeStrings) as T;
  if (value !== null && typeof value === "object") {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [escapeControl(k), escapeStrings(v)]),
    ) as T;
  }
  return value;
}

/** Like escapeControl, but keeps `\n` and `\t`: the layout of hookinbox's own text. */
function escapeKeepingLayout(text: string): string {
  let out = "";
  for (const c of text) {
    const code = c.charCodeAt(0);
    out += code !== 0x0a && code !== 0x09 && isControl(code) ? visible(code) : c;
  }
  return out;
}

/**
 * JSON for a terminal: JSON.stringify already escapes C0 controls; this also writes DEL, C1
 * controls, U+2028/U+2029 and bidi controls as `\uXXXX` escapes. Still valid JSON, parsing to the
 * same value.
 *
 * @example
 * ```ts
 * jsonForTerminal({ type: "a\u202eb" }); // '{"type":"a\\u202eb"}'
 * ```
 */
export function jsonForTerminal(value: unknown, indent?: number): string {
  let out = "";
  // JSON.stringify escapes C0 inside strings itself: a raw newline is the indentation's own.
  for (const c of JSON.stringify(value, null, indent)) {
    const code = c.charCodeAt(0);
    out += code !== 0x0a && isControl(code) ? `\\u${code.toString(16).padStart(4, "0")}` : c;
  }
  return out;
}

/**
 * The only way the CLI writes to stdout and stderr. Whatever a command passes, control characters
 * other than `\n` and `\t` come out as visible escapes; commands still escape the data they
 * interpolate (escapeControl) so a sender's newline cannot fake a line either.
 *
 * @example
 * ```ts
 * const out = terminalOutput(process.stdout);
 * out.write("type: invoice\u001b[2J\n"); // prints "type: invoice\x1b[2J"
 * ```
 */
export class TerminalOutput {
  readonly #stream: NodeJS.WritableStream;
  /** Whether the stream is a terminal (progress bars redraw in place only there). */
  readonly isTTY: boolean;

  constructor(stream: NodeJS.WritableStream) {
    this.#stream = stream;
    this.isTTY = (stream as { isTTY?: boolean }).isTTY === true;
  }

  /** Writes text, control characters other than `\n` and `\t` escaped. */
  write(text: string): void {
    this.#stream.write(escapeKeepingLayout(text));
  }

  /** Redraws the current line (a progress bar): a carriage return, then the escaped text. */
  redrawLine(text: string): void {
    this.#stream.write(`\r${escapeKeepingLayout(text)}`);
  }
}

/**
 * Wraps a stream as the CLI's escaping output.
 *
 * @example
 * ```ts
 * const ctx = { cwd, env, stdout: terminalOutput(process.stdout), stderr: terminalOutput(process.stderr) };
 * ```
 */
export function terminalOutput(stream: NodeJS.WritableStream): TerminalOutput {
  return new TerminalOutput(stream);
}
