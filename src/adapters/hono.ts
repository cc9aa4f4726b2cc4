import type { Inbox } from "../inbox.ts";
import { toFetchHandler } from "./fetch.ts";

/** The small part of Hono's `Context` the handler uses (no runtime or type dependency on hono). */
interface HonoContextLike {
  readonly req: { readonly raw: Request; param(name: string): string | undefined };
  /** On @hono/node-server, `env.incoming` is Node's request (for the remote address). */
  readonly env?: unknown;
}

function remoteAddressOf(env: unknown): string | undefined {
  const incoming = (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)
    ?.incoming;
  return incoming?.socket?.remoteAddress;
}

/**
 * A Hono handler for an inbox: mount it on a route with a `:source` parameter (or pass
 * `source`). It reads the raw body from `c.req.raw`, so do not call `c.req.json()` before it.
 * On @hono/node-server the remote address (for `allowIps`) comes from the Node request.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { honoHandler } from "hookinbox/hono";
 *
 * const app = new Hono();
 * app.post("/webhooks/:source", honoHandler(inbox));
 * ```
 */
export function honoHandler(
  inbox: Inbox,
  options: { source?: string } = {},
): (c: HonoContextLike) => Promise<Response> {
  const handle = toFetchHandler(inbox);
  return (c) => {
    const source = options.source ?? c.req.param("source");
    const remoteAddress = remoteAddressOf(c.env);
    return handle(c.req.raw, {
      ...(source === undefined ? {} : { source }),
      ...(remoteAddress === undefined ? {} : { remoteAddress }),
    });
  };
}
