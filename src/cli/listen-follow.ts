import { eventIdFloor } from "../admin/event-range.ts";
import { type StreamedEvent, streamLookbackMs } from "../admin/event-stream-hub.ts";
import { type ErrorCode, errorCodes, type HookinboxError, hookinboxError } from "../errors.ts";
import { idTime } from "../ids.ts";
import { readSse } from "./listen-sse.ts";

/**
 * An event as the gateway's stream (and `GET /api/events/{id}`) carries it: the stream's own
 * shape, without the purge time `listen` does not use.
 *
 * @example
 * ```ts
 * const event = JSON.parse(message.data) as ListenedEvent;
 * ```
 */
export type ListenedEvent = Omit<StreamedEvent, "purgedAt">;

/** Where to read and with which token. */
export interface GatewayAccess {
  /** The gateway's base URL, e.g. `https://hooks.example.com`. */
  readonly gateway: string;
  readonly token: string;
}

const known = new Set<string>(errorCodes);

/**
 * An admin API URL under the gateway's base URL, whose path is kept (a gateway mounted under
 * `/ops` serves `/ops/api/…`).
 *
 * @example
 * ```ts
 * apiUrl({ gateway: "https://example.com/ops/", token }, "/api/events/evt_1"); // "https://example.com/ops/api/events/evt_1"
 * ```
 */
export function apiUrl(access: GatewayAccess, path: string): string {
  return `${access.gateway.replace(/\/+$/, "")}${path}`;
}

/**
 * A non-2xx answer of the admin API as one HookinboxError with the gateway's own code (401
 * HOOKINBOX_ADMIN_UNAUTHORIZED, 403 HOOKINBOX_ADMIN_READ_ONLY, …).
 *
 * @example
 * ```ts
 * if (!response.ok) throw await gatewayError(response);
 * ```
 */
export async function gatewayError(response: Response): Promise<HookinboxError> {
  const text = await response.text().catch(() => "");
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    code = undefined;
  }
  if (code !== undefined && known.has(code))
    return hookinboxError(code as ErrorCode, `the gateway answered ${response.status}`);
  return hookinboxError(
    "HOOKINBOX_LISTEN_UNREACHABLE",
    `the gateway answered ${response.status}, not the admin API (check --gateway)`,
  );
}

/**
 * A failed connection as HOOKINBOX_LISTEN_UNREACHABLE, naming the gateway and the network's reason.
 *
 * @example
 * ```ts
 * throw unreachable("https://hooks.example.com", error); // "… (ECONNREFUSED)"
 * ```
 */
export function unreachable(gateway: string, error: unknown): HookinboxError {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const reason = cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
  return hookinboxError("HOOKINBOX_LISTEN_UNREACHABLE", `${gateway} (${reason})`, error);
}

/**
 * The cursor a resume asks from: `streamLookbackMs` before the last one, so an event another
 * gateway committed late (after a newer one was sent) is sent on resume too; the events sent
 * twice that way are skipped by the caller's recent ids.
 *
 * @example
 * ```ts
 * overlapCursor("evt_01JD7Q5Z8X9K3M4N5P6R7S8T9V"); // the id floor 5 s earlier
 * ```
 */
export function overlapCursor(cursor: string): string {
  return eventIdFloor(idTime(cursor) - streamLookbackMs);
}

/** Statuses worth retrying: the gateway is busy, restarting, or behind a proxy that is. */
const retryable = new Set([429, 502, 503, 504]);

/** How `followEvents` reports what it does besides events. */
export interface FollowHooks {
  /** Each event, in the stream's order; the next waits until this resolves. */
  onEvent(event: ListenedEvent): Promise<void>;
  /** Connected (again); `resumed` when it sent a Last-Event-ID. */
  onConnected?(resumed: boolean): void;
  /** Lost the stream; retrying after `delayMs`. */
  onRetry?(reason: string, delayMs: number): void;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Follows `GET /api/events/stream` until `signal` aborts: each event goes to `onEvent` in order,
 * one at a time; a lost stream is reopened with backoff (0.5 s doubling to 10 s) and a
 * `Last-Event-ID` 5 s before the last cursor (`overlapCursor`), so nothing is missed; `onEvent`
 * skips the ids it already handled. The first connection failing,
 * or any 4xx, is thrown as one error with a code.
 *
 * @example
 * ```ts
 * await followEvents({ gateway, token }, new URLSearchParams({ source: "stripe" }), hooks, signal);
 * ```
 */
export async function followEvents(
  access: GatewayAccess,
  query: URLSearchParams,
  hooks: FollowHooks,
  signal: AbortSignal,
): Promise<void> {
  const url = apiUrl(access, `/api/events/stream?${query}`);
  let lastEventId: string | null = null;
  let connectedOnce = false;
  let failures = 0;
  const retry = async (reason: string) => {
    const delayMs = Math.min(500 * 2 ** failures, 10_000);
    failures++;
    hooks.onRetry?.(reason, delayMs);
    await sleep(delayMs, signal);
  };
  while (!signal.aborted) {
    let response: Response;
    try {
      response = await fetch(url, {
        headers: {
          authorization: `Bearer ${access.token}`,
          accept: "text/event-stream",
          ...(lastEventId === null ? {} : { "last-event-id": overlapCursor(lastEventId) }),
        },
        signal,
      });
    } catch (error) {
      if (signal.aborted) return;
      if (!connectedOnce) throw unreachable(access.gateway, error);
      await retry(unreachable(access.gateway, error).message);
      continue;
    }
    if (response.status !== 200) {
      const error = await gatewayError(response);
      if (!retryable.has(response.status)) throw error;
      await retry(error.code);
      continue;
    }
    hooks.onConnected?.(lastEventId !== null);
    connectedOnce = true;
    failures = 0;
    try {
      for await (const message of readSse(response.body as unknown as AsyncIterable<Uint8Array>)) {
        if (message.event !== "webhook") continue;
        await hooks.onEvent(JSON.parse(message.data) as ListenedEvent);
        // Only once the event was handled: a cut before then sends it again.
        if (message.id !== null) lastEventId = message.id;
      }
    } catch (error) {
      if (signal.aborted) return;
      await retry(`the stream broke (${(error as Error).message})`);
      continue;
    }
    if (!signal.aborted) await retry("the gateway ended the stream");
  }
}
