/**
 * Shortens text to one line of at most `max` characters, ending in `…` when cut.
 *
 * @example
 * ```ts
 * oneLine("Error: boom\n    at x", 12); // "Error: boom…"
 * ```
 */
export function oneLine(text: string | null, max: number): string {
  if (text === null || text === "") return "-";
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
