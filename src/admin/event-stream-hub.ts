import { idTime } from "../ids.ts";
import type { EventDetail, EventSummary } from "../store/types.ts";
import type { AdminHost } from "./admin-host.ts";
import { eventIdFloor, eventsBetween, type StreamFilter } from "./event-range.ts";

/** How far back each poll looks again, for events committed after a newer one (clock skew, a slow commit). */
export const streamLookbackMs = 5_000;
/** How often the shared poller reads new events while anyone listens (other gateways' accepts). */
export const streamPollMs = 1_000;
/** How often every stream gets a comment line, so proxies and clients see it alive. */
export const streamHeartbeatMs = 15_000;

/** One event as a stream sends it (`data:` of an SSE message). */
export interface StreamedEvent {
  readonly id: string;
  readonly source: string;
  readonly type: string | null;
  readonly receivedAt: string;
  /** The request's headers as received, in order, names as sent. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** The raw body, base64 (empty after retention purged it: then `purgedAt` is set). */
  readonly body: string;
  readonly purgedAt: string | null;
}

/** One listener of the hub. */
export interface StreamSubscriber {
  readonly filter: StreamFilter;
  /** A new event, oldest first, once. */
  deliver(event: StreamedEvent): void;
  heartbeat(): void;
  /** The inbox closes: end the response. */
  close(): void;
}

/** The shared poller of one inbox: one read per tick for all of its streams. */
export interface StreamHub {
  subscribe(subscriber: StreamSubscriber): () => void;
  count(): number;
  /** Resolves once the hub has read what was stored when it started (nothing of it is sent). */
  primed(): Promise<void>;
  /** Ids below this are never sent by the hub again (`streamLookbackMs` behind its clock). */
  floorMs(): number;
  /** Reads now (an event was accepted in this process). */
  wake(): void;
  close(): void;
}

/**
 * An event as a stream sends it.
 *
 * @example
 * ```ts
 * const event = streamedEvent(await store.getEvent(id));
 * ```
 */
export function streamedEvent(detail: EventDetail): StreamedEvent {
  const { body } = detail;
  return {
    id: detail.id,
    source: detail.source,
    type: detail.type,
    receivedAt: detail.receivedAt,
    headers: detail.headers,
    body: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("base64"),
    purgedAt: detail.purgedAt,
  };
}

/**
 * Whether an event passes a stream's filter.
 *
 * @example
 * ```ts
 * matchesFilter({ source: "stripe" }, { source: "stripe", type: "invoice.paid" }); // true
 * ```
 */
export function matchesFilter(
  filter: StreamFilter,
  event: Pick<EventSummary, "source" | "type">,
): boolean {
  return (
    (filter.source === undefined || filter.source === event.source) &&
    (filter.type === undefined || filter.type === event.type)
  );
}

function createHub(host: AdminHost): StreamHub {
  const subscribers = new Set<StreamSubscriber>();
  // Ids already read, with their times, back to the floor.
  const seen = new Map<string, number>();
  let floor = host.now() - streamLookbackMs;
  let primed: Promise<void> | null = null;
  let poll: NodeJS.Timeout | null = null;
  let heartbeat: NodeJS.Timeout | null = null;
  let running = false;
  let again = false;

  /**
   * Reads the events from the floor on that were not read yet. The priming read (`emit` false,
   * `before` the time of the first subscribe) only marks as read those made before that time: an
   * event accepted once the first listener subscribed, but before this read's query ran, is sent
   * by the next tick instead of being taken for one that was already there.
   */
  const read = async (emit: boolean, before = Number.POSITIVE_INFINITY) => {
    await host.ready();
    const { store } = host.operations;
    const all = await eventsBetween(store, {}, eventIdFloor(floor), null);
    const fresh = all.filter((event) => !seen.has(event.id) && idTime(event.id) < before);
    for (const event of fresh) seen.set(event.id, idTime(event.id));
    floor = Math.max(floor, host.now() - streamLookbackMs);
    for (const [id, at] of seen) if (at < floor) seen.delete(id);
    if (!emit) return;
    for (const summary of fresh) {
      const targets = [...subscribers].filter((s) => matchesFilter(s.filter, summary));
      if (targets.length === 0) continue;
      // One read of the body per event, whatever the number of listeners.
      const detail = await store.getEvent(summary.id);
      if (!detail) continue;
      const event = streamedEvent(detail);
      for (const subscriber of targets) if (subscribers.has(subscriber)) subscriber.deliver(event);
    }
  };

  const tick = () => {
    if (running) {
      again = true;
      return;
    }
    if (subscribers.size === 0 || primed === null) return;
    running = true;
    const ready = primed;
    void ready
      .then(() => read(true))
      // A store error is retried on the next tick; the streams stay open.
      .catch(() => undefined)
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          tick();
        }
      });
  };

  const stop = () => {
    if (poll) clearInterval(poll);
    if (heartbeat) clearInterval(heartbeat);
    poll = heartbeat = null;
    primed = null;
  };

  return {
    subscribe(subscriber) {
      subscribers.add(subscriber);
      if (primed === null) {
        // Idle until now: start from the present, not from where the last listener left.
        seen.clear();
        const subscribedAt = host.now();
        floor = subscribedAt - streamLookbackMs;
        primed = read(false, subscribedAt).catch(() => undefined);
        poll = setInterval(tick, streamPollMs).unref();
        heartbeat = setInterval(() => {
          for (const s of subscribers) s.heartbeat();
        }, streamHeartbeatMs).unref();
      }
      return () => {
        subscribers.delete(subscriber);
        if (subscribers.size === 0) stop();
      };
    },
    count: () => subscribers.size,
    primed: () => primed ?? Promise.resolve(),
    floorMs: () => floor,
    wake: () => {
      if (subscribers.size > 0) setImmediate(tick);
    },
    close() {
      for (const subscriber of [...subscribers]) subscriber.close();
      subscribers.clear();
      stop();
    },
  };
}

const hubs = new WeakMap<AdminHost, StreamHub>();

/**
 * The event-stream hub of one inbox (made on first use): one poller and one heartbeat timer for
 * every open stream, so an idle listener costs a socket and a set entry, not a timer and a query.
 *
 * @example
 * ```ts
 * const unsubscribe = eventStreamHub(host).subscribe({ filter: {}, deliver, heartbeat, close });
 * ```
 */
export function eventStreamHub(host: AdminHost): StreamHub {
  let hub = hubs.get(host);
  if (!hub) {
    hub = createHub(host);
    hubs.set(host, hub);
  }
  return hub;
}

/**
 * Tells the streams of an inbox that it accepted events (so they need not wait for the poll).
 *
 * @example
 * ```ts
 * if (acceptedEventIds(response)?.length) wakeEventStreams(admin);
 * ```
 */
export function wakeEventStreams(host: AdminHost): void {
  hubs.get(host)?.wake();
}

/**
 * Ends every open stream of an inbox (it is closing; clients reconnect elsewhere).
 *
 * @example
 * ```ts
 * closeEventStreams(admin);
 * ```
 */
export function closeEventStreams(host: AdminHost): void {
  hubs.get(host)?.close();
}
