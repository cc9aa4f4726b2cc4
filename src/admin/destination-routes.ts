import { hookinboxError } from "../errors.ts";
import {
  changeDestinationState,
  configuredDestinations,
  type DestinationAction,
  destinationStatus,
  destinationStatuses,
  unknownDestination,
} from "../forward/destination-admin.ts";
import type { Inbox } from "../inbox.ts";
import { jsonResponse } from "../ingest/request.ts";
import {
  type AdminRoute,
  jsonBody,
  optionalString,
  parseDeliveryStatus,
  parseLimit,
  pathParam,
  targetsOf,
} from "./params.ts";

/**
 * The replay targets a body asks for: `targets` (names), or `destination` (one configured
 * destination only); both at once is HOOKINBOX_QUERY_INVALID.
 *
 * @example
 * ```ts
 * replayTargets(inbox, { destination: "app" }); // ["app"]
 * ```
 */
export function replayTargets(inbox: Inbox, input: Record<string, unknown>): string[] | undefined {
  const destination = optionalString(input.destination, "destination");
  const targets = input.targets;
  if (destination !== undefined) {
    if (targets !== undefined)
      throw hookinboxError("HOOKINBOX_QUERY_INVALID", "give targets or destination, not both");
    if (!inbox.config.destinations.has(destination))
      throw unknownDestination(configuredDestinations(inbox.config.destinations), destination);
    return [destination];
  }
  return targetsOf(targets);
}

const action =
  (kind: DestinationAction): AdminRoute =>
  async (m, _u, body, { inbox }) => {
    const reason = kind === "pause" ? optionalString(jsonBody(body).reason, "reason") : undefined;
    await inbox.ready();
    const status = await changeDestinationState(
      inbox.store,
      configuredDestinations(inbox.config.destinations),
      pathParam(m[1]!),
      kind,
      reason ?? null,
      inbox.now(),
    );
    return jsonResponse(200, status);
  };

/**
 * Admin routes for destinations: their state and queue, pause/resume/enable, and their
 * deliveries (retries and replays go through the deliveries and events routes).
 *
 * @example
 * ```ts
 * const route = destinationRoutes.find((r) => r.path.test("/api/destinations"));
 * ```
 */
export const destinationRoutes: Array<{ method: string; path: RegExp; run: AdminRoute }> = [
  {
    method: "GET",
    path: /^\/api\/destinations$/,
    run: async (_m, _u, _b, { inbox }) => {
      await inbox.ready();
      const items = await destinationStatuses(
        inbox.store,
        configuredDestinations(inbox.config.destinations),
        inbox.now(),
      );
      return jsonResponse(200, { items });
    },
  },
  {
    method: "GET",
    path: /^\/api\/destinations\/([^/]+)$/,
    run: async (m, _u, _b, { inbox }) => {
      await inbox.ready();
      const status = await destinationStatus(
        inbox.store,
        configuredDestinations(inbox.config.destinations),
        pathParam(m[1]!),
        inbox.now(),
      );
      return jsonResponse(200, status);
    },
  },
  { method: "POST", path: /^\/api\/destinations\/([^/]+)\/pause$/, run: action("pause") },
  { method: "POST", path: /^\/api\/destinations\/([^/]+)\/resume$/, run: action("resume") },
  { method: "POST", path: /^\/api\/destinations\/([^/]+)\/enable$/, run: action("enable") },
  {
    method: "GET",
    path: /^\/api\/destinations\/([^/]+)\/deliveries$/,
    run: async (m, url, _b, { inbox }) => {
      const name = pathParam(m[1]!);
      if (!inbox.config.destinations.has(name))
        throw unknownDestination(configuredDestinations(inbox.config.destinations), name);
      const q = url.searchParams;
      const status = parseDeliveryStatus(q.get("status"));
      await inbox.ready();
      const page = await inbox.store.listDeliveries({
        target: name,
        status,
        limit: parseLimit(q.get("limit")),
        cursor: q.get("cursor") ?? undefined,
      });
      return jsonResponse(200, page);
    },
  },
];
