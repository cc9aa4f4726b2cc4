import { z } from "zod";
import { parseDuration } from "../config/units.ts";
import { hookinboxError } from "../errors.ts";
import { parseInput } from "../operations/operation.ts";
import { eventIdFloor } from "./event-range.ts";
import { runEventStream } from "./event-stream.ts";
import { eventStreamHub } from "./event-stream-hub.ts";
import type { RawRoute } from "./route-table.ts";

const eventId = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * The query of `GET /api/events/stream` (strict: a misspelt filter is refused, never ignored).
 *
 * @example
 * ```ts
 * streamQuery.parse({ source: "stripe", since: "10m" });
 * ```
 */
export const streamQuery = z.strictObject({
  source: z.string().min(1).max(200).optional().describe("only events of this source"),
  type: z.string().min(1).max(500).optional().describe("only events of this type"),
  since: z
    .string()
    .refine((value) => parseDuration(value) !== undefined || !Number.isNaN(Date.parse(value)), {
      message: "must be a duration (10m, 2h) or an ISO 8601 time",
    })
    .optional()
    .describe("first send the stored events received since then (a duration back, or a time)"),
  after: z
    .string()
    .regex(eventId, { message: "must be an event id (evt_…)" })
    .optional()
    .describe("first send the stored events after this id (the Last-Event-ID header wins)"),
});

// parseInput's strict checking and messages, as every other route's query gets them; the
// stream itself is not an operation (it never ends), so this one never runs.
const streamParams = {
  name: "events.stream",
  summary: "new events as Server-Sent Events",
  readOnly: true,
  input: streamQuery,
  run: async () => null,
};

/** `since` as a time: a duration back from now, or an ISO 8601 time. */
function sinceMs(since: string, now: number): number {
  const back = parseDuration(since);
  return back !== undefined ? now - back : Date.parse(since);
}

/**
 * `GET /api/events/stream`: Server-Sent Events of the events this inbox stores, in arrival order.
 * Each message is `id: <cursor>`, `event: webhook`, `data: {id, source, type, receivedAt,
 * headers, body (base64), purgedAt}`; a `: heartbeat` comment every 15 s. A reconnect with
 * `Last-Event-ID` first gets what it missed. It only reads: no delivery, attempt or lease is
 * touched. At most `admin.maxStreams` per process (503 HOOKINBOX_STREAM_LIMITED past it).
 *
 * @example
 * ```ts
 * const adminRoutes = [...operationRoutes, eventStreamRoute];
 * ```
 */
export const eventStreamRoute: RawRoute = {
  method: "GET",
  path: "/api/events/stream",
  summary:
    "new events as Server-Sent Events (Last-Event-ID resumes; the read-only token may use it)",
  contentType: "text/event-stream",
  query: streamQuery,
  raw: async (host, { url, headers, canStream }) => {
    if (!canStream) throw hookinboxError("HOOKINBOX_STREAM_UNSUPPORTED");
    const query = parseInput(
      streamParams,
      Object.fromEntries(url.searchParams),
      "HOOKINBOX_QUERY_INVALID",
    );
    const lastEventId = headers.get("last-event-id")?.trim() || null;
    if (lastEventId !== null && !eventId.test(lastEventId))
      throw hookinboxError("HOOKINBOX_CURSOR_INVALID", "Last-Event-ID must be an event id");
    await host.ready();
    const hub = eventStreamHub(host);
    if (hub.count() >= (host.config.admin.maxStreams ?? 200))
      throw hookinboxError("HOOKINBOX_STREAM_LIMITED");
    const after =
      lastEventId ??
      query.after ??
      (query.since === undefined ? null : eventIdFloor(sinceMs(query.since, host.now())));
    const filter = {
      ...(query.source === undefined ? {} : { source: query.source }),
      ...(query.type === undefined ? {} : { type: query.type }),
    };
    return {
      status: 200,
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "x-accel-buffering": "no",
      },
      body: "",
      stream: {
        start: (sink) =>
          runEventStream(
            host,
            hub,
            { filter, after, lastEventId: lastEventId ?? query.after ?? null },
            sink,
          ),
      },
    };
  },
};
