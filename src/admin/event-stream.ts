import { idTime } from "../ids.ts";
import type { ResponseStream } from "../ingest/request.ts";
import type { AdminHost } from "./admin-host.ts";
import { eventIdFloor, eventsBetween, type StreamFilter } from "./event-range.ts";
import { type StreamedEvent, type StreamHub, streamedEvent } from "./event-stream-hub.ts";

type Sink = Parameters<ResponseStream["start"]>[0];

/** A client this far behind (bytes buffered) is cut; it resumes with Last-Event-ID. */
const maxBufferedBytes = 8 * 1024 * 1024;
/** Catch-up waits while more than this is buffered. */
const catchUpBufferedBytes = 1024 * 1024;
const dayMs = 86_400_000;

/**
 * One SSE message: `id:` is the stream's cursor (the highest event id sent so far, so a resume
 * never goes back before an event already sent), `event: webhook`, `data:` one line of JSON.
 *
 * @example
 * ```ts
 * sseMessage("evt_01J…", event); // "id: evt_01J…\nevent: webhook\ndata: {…}\n\n"
 * ```
 */
export function sseMessage(cursor: string, event: StreamedEvent): string {
  return `id: ${cursor}\nevent: webhook\ndata: ${JSON.stringify(event)}\n\n`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where a stream starts and what it carries. */
export interface StreamStart {
  readonly filter: StreamFilter;
  /** Stored events after this id (Last-Event-ID, or `eventIdFloor` of `since`) are sent first; null: only new ones. */
  readonly after: string | null;
  /** The client's Last-Event-ID (its cursor so far), or null. */
  readonly lastEventId: string | null;
}

/**
 * Runs one stream: subscribes to the hub at once (new events wait in a queue), sends the stored
 * events after `start.after` in time windows read
 * through the newest-first listing, then the queue, then whatever the hub finds. An event both
 * read and queued is sent once. Returns the function that stops it (the client went away).
 *
 * @example
 * ```ts
 * const stop = runEventStream(host, hub, { filter: {}, after: id, lastEventId: id }, sink);
 * ```
 */
export function runEventStream(
  host: AdminHost,
  hub: StreamHub,
  start: StreamStart,
  sink: Sink,
): () => void {
  const { filter, after } = start;
  let live = false;
  let stopped = false;
  let cursor = start.lastEventId ?? "";
  let queued: StreamedEvent[] = [];
  // Ids sent by catch-up that the hub may still find (not yet below its floor).
  const caughtUp = new Set<string>();

  const send = (event: StreamedEvent) => {
    if (stopped || caughtUp.has(event.id)) return;
    if (event.id > cursor) cursor = event.id;
    sink.write(sseMessage(cursor, event));
    if (sink.buffered() > maxBufferedBytes) stop();
  };
  const unsubscribe = hub.subscribe({
    filter,
    deliver(event) {
      if (live) {
        const floor = hub.floorMs();
        for (const id of caughtUp) if (idTime(id) < floor) caughtUp.delete(id);
        send(event);
      } else queued.push(event);
    },
    heartbeat: () => {
      if (!stopped) sink.write(": heartbeat\n\n");
    },
    close: () => stop(),
  });
  function stop() {
    if (stopped) return;
    stopped = true;
    unsubscribe();
    sink.end();
  }

  const catchUp = async (from: string) => {
    const { store } = host.operations;
    let lower = from;
    let windowMs = 60_000;
    for (;;) {
      const untilMs = idTime(lower) + windowMs;
      const upper = untilMs > host.now() ? null : eventIdFloor(untilMs);
      const items = await eventsBetween(store, filter, lower, upper);
      for (const item of items) {
        while (!stopped && sink.buffered() > catchUpBufferedBytes) await sleep(20);
        if (stopped) return;
        const detail = await store.getEvent(item.id);
        if (!detail) continue;
        send(streamedEvent(detail));
        if (idTime(item.id) >= hub.floorMs()) caughtUp.add(item.id);
      }
      if (upper === null || stopped) return;
      lower = upper;
      // Empty stretches are crossed fast, busy ones in smaller steps.
      if (items.length < 100) windowMs = Math.min(windowMs * 2, dayMs);
      else if (items.length > 1000) windowMs = Math.max(1_000, windowMs / 2);
    }
  };

  sink.write("retry: 1000\n: connected\n\n");
  void (async () => {
    await hub.primed();
    if (after !== null) await catchUp(after);
    live = true;
    const pending = queued;
    queued = [];
    for (const event of pending) send(event);
  })().catch(() => stop());
  return stop;
}
