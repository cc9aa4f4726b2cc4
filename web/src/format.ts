// Small display helpers shared by the pages.

/**
 * `14:02:07` in the browser's time zone.
 *
 * @example
 * ```ts
 * clock(receipt.receivedAt); // "14:02:07"
 * ```
 */
export function clock(iso: string): string {
  return new Date(iso).toLocaleTimeString([], { hour12: false });
}

/**
 * A local date and time, or "—".
 *
 * @example
 * ```ts
 * stamp("2026-12-01T14:02:07Z"); // "2026-12-01 14:02:07" (in UTC)
 * ```
 */
export function stamp(iso: string | null): string {
  if (!iso) return "—";
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/**
 * An age in seconds, rounded for reading.
 *
 * @example
 * ```ts
 * age(90); // "2 min"
 * ```
 */
export function age(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/**
 * Milliseconds between two ISO times, or "—".
 *
 * @example
 * ```ts
 * latency(attempt.startedAt, attempt.endedAt); // "49 ms"
 * ```
 */
export function latency(start: string, end: string | null): string {
  if (!end) return "—";
  return `${Math.max(0, Date.parse(end) - Date.parse(start))} ms`;
}

/**
 * The byte length of a base64 string's content.
 *
 * @example
 * ```ts
 * base64Size("aGk="); // 2
 * ```
 */
export function base64Size(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

/**
 * A size for reading.
 *
 * @example
 * ```ts
 * size(27); // "27 bytes"
 * ```
 */
export function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KB`;
}

const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * The event-list cursor that starts just before `ms`: event ids are `evt_<ulid>`, which sort by
 * time, so "received before" is a cursor rather than a scan.
 *
 * @example
 * ```ts
 * api(`events?cursor=${cursorBefore(Date.parse("2026-12-01T14:00:00Z"))}`);
 * ```
 */
export function cursorBefore(ms: number): string {
  let time = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    time = alphabet[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const id = `evt_${time}${"0".repeat(16)}`;
  return btoa(id).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
