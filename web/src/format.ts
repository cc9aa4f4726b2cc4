// Small display helpers shared by the pages.

/** `14:02:07` in the browser's time zone. */
export function clock(iso: string): string {
  return new Date(iso).toLocaleTimeString([], { hour12: false });
}

/** `2026-12-01 14:02:07`. */
export function stamp(iso: string | null): string {
  if (!iso) return "—";
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `3 s`, `4 min`, `2.5 h`. */
export function age(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** Milliseconds between two ISO times, or "—". */
export function latency(start: string, end: string | null): string {
  if (!end) return "—";
  return `${Math.max(0, Date.parse(end) - Date.parse(start))} ms`;
}

/** The byte length of a base64 string's content. */
export function base64Size(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}

/** `1,234 bytes` / `1.2 KB`. */
export function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KB`;
}

const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * The event-list cursor that starts just before `ms`: event ids are `evt_<ulid>`, which sort by
 * time, so "received before" is a cursor rather than a scan.
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
