import { hookinboxError } from "../errors.ts";
import type { Inbox } from "../inbox.ts";
import { toFetchHandler } from "./fetch.ts";
import { type AfterFunction, type ProcessAfterResponse, processAfter } from "./process-after.ts";

export { type NextCronOptions, type NextCronRoute, nextCronRoute } from "./next-cron.ts";
export type { AfterFunction, ProcessAfterResponse } from "./process-after.ts";

/** The second argument Next.js (15 and later) passes to a route handler. */
export interface NextRouteContext {
  readonly params: Promise<Record<string, string | string[] | undefined>>;
}

/** What `nextRouteHandler` returns: export its `POST` from `route.ts`. */
export interface NextRouteHandlers {
  POST(request: Request, context: NextRouteContext): Promise<Response>;
}

/** Options of `nextRouteHandler`. */
export interface NextRouteOptions {
  /** The route segment that names the source (default `source`, as in `[source]`). */
  readonly param?: string;
  /** A fixed source, for a route that serves one (`app/api/stripe/route.ts`). */
  readonly source?: string;
  /** `after` from `next/server`: needed by `processAfterResponse`. */
  readonly after?: AfterFunction;
  /**
   * Process each accepted event right after the response, inside this invocation (for hosts
   * without a long-lived worker, as Vercel): `inbox.processAvailable` for the event's ids, for at
   * most `maxMs` plus `graceMs`. Keep both under the route's `maxDuration`, and the lease above.
   */
  readonly processAfterResponse?: ProcessAfterResponse;
}

/**
 * Route handlers for a Next.js App Router route such as `app/api/webhooks/[source]/route.ts`.
 * Pass a function that creates the inbox: it runs on the first request, not while `next build`
 * evaluates the module, and once per server process. The route must run on the Node.js runtime,
 * and `next.config` must list `hookinbox` in `serverExternalPackages` (it reads its migrations
 * and starts its SQLite writer from files beside its modules, which a bundle would not keep).
 *
 * With `after` and `processAfterResponse`, the event is stored and answered first, then its
 * deliveries run after the response (a provider's retry of it, a duplicate, runs the original's).
 * Throws `HOOKINBOX_AFTER_MISSING` when `processAfterResponse` comes without `after`.
 *
 * @example
 * ```ts
 * // app/api/webhooks/[source]/route.ts
 * import { after } from "next/server";
 * import { createInbox } from "hookinbox";
 * import { nextRouteHandler } from "hookinbox/next";
 *
 * export const runtime = "nodejs";
 * export const maxDuration = 60;
 * export const { POST } = nextRouteHandler(
 *   () =>
 *     createInbox({
 *       store: process.env.DATABASE_URL,
 *       sources: { stripe: { provider: "stripe", secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] } },
 *       handlers: { "stripe:*": async (event) => {} },
 *     }),
 *   { after, processAfterResponse: { maxMs: 40_000, graceMs: 10_000 } },
 * );
 * ```
 */
export function nextRouteHandler(
  inbox: Inbox | (() => Inbox),
  options: NextRouteOptions = {},
): NextRouteHandlers {
  const { after, processAfterResponse } = options;
  if (processAfterResponse && !after) throw hookinboxError("HOOKINBOX_AFTER_MISSING");
  const param = options.param ?? "source";
  let created: Inbox | undefined;
  let handle: ReturnType<typeof toFetchHandler> | undefined;
  return {
    async POST(request, context) {
      created ??= typeof inbox === "function" ? inbox() : inbox;
      handle ??= toFetchHandler(created);
      const value = options.source ?? (await context.params)[param];
      const source = Array.isArray(value) ? value.join("/") : value;
      const response = await handle(request, source === undefined ? {} : { source });
      if (after && processAfterResponse)
        processAfter(after, created, response, processAfterResponse);
      return response;
    },
  };
}
