import { escapeControl } from "./terminal.ts";

/**
 * One line of text safe to print to a terminal: whitespace runs collapse to one space, other
 * control characters (ESC, BEL, C1…) are shown as `\xNN`, and the result is cut to `max`
 * characters with `…`. For text a remote party chose (a receiver's answer).
 *
 * @example
 * ```ts
 * printable("ok\u001b[2J", 20); // "ok\\x1b[2J"
 * ```
 */
export function printable(text: string, max: number): string {
  const flat = escapeControl(text.replace(/\s+/g, " ").trim());
  if (flat === "") return "-";
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
