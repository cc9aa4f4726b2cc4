import type { Inbox } from "../inbox.ts";
import { toFetchHandler } from "./fetch.ts";

/** The second argument Next.js (15 and later) passes to a route handler. */
export interface NextRouteContext {
  readonly params: Promise<Record<string, string | string[] | undefined>>;
}

/** What `nextRouteHandler` returns: export its `POST` from `route.ts`. */
export interface NextRouteHandlers {
  POST(request: Request, context: NextRouteContext): Promise<Response>;
}

/**
 * Route handlers for a Next.js App Router route such as `app/api/webhooks/[source]/route.ts`.
 * Pass a function that creates the inbox: it runs on the first request, not while `next build`
 * evaluates the module, and once per server process. The route must run on the Node.js runtime,
 * and `next.config` must list `hookinbox` in `serverExternalPackages` (it reads its migrations
 * and starts its SQLite writer from files beside its modules, which a bundle would not keep).
 *
 * @example
 * ```ts
 * // app/api/webhooks/[source]/route.ts
 * import { createInbox } from "hookinbox";
 * import { nextRouteHandler } from "hookinbox/next";
 *
 * export const runtime = "nodejs";
 * export const { POST } = nextRouteHandler(() =>
 *   createInbox({
 *     store: process.env.DATABASE_URL,
 *     sources: { stripe: { provider: "stripe", secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] } },
 *   }),
 * );
 * ```
 */
export function nextRouteHandler(
  inbox: Inbox | (() => Inbox),
  options: { param?: string; source?: string } = {},
): NextRouteHandlers {
  const param = options.param ?? "source";
  let handle: ReturnType<typeof toFetchHandler> | undefined;
  return {
    async POST(request, context) {
      handle ??= toFetchHandler(typeof inbox === "function" ? inbox() : inbox);
      const value = options.source ?? (await context.params)[param];
      const source = Array.isArray(value) ? value.join("/") : value;
      return handle(request, source === undefined ? {} : { source });
    },
  };
}
