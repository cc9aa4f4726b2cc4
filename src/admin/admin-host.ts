import type { ResolvedConfig } from "../config/index.ts";
import type { OperationContext } from "../operations/operation.ts";
import type { InboxMetrics } from "./metrics.ts";

/**
 * What the admin API needs from the inbox that serves it, and nothing more: the inbox builds one
 * such object from its parts (an Inbox satisfies it too), so admin/* never imports the inbox.
 * Sessions and the wrong-token limiter are kept per host object.
 *
 * @example
 * ```ts
 * const host: AdminHost = inbox;
 * await host.ready();
 * await listEvents.run(host.operations, {});
 * ```
 */
export interface AdminHost {
  readonly config: {
    readonly admin: Pick<ResolvedConfig["admin"], "authLimit"> &
      Partial<Pick<ResolvedConfig["admin"], "readToken" | "maxStreams">>;
    readonly http: Pick<ResolvedConfig["http"], "trustedProxies">;
  };
  /** The host's clock (ms since the epoch): session expiry, the wrong-token window. */
  now(): number;
  /** Resolves once the store is migrated; operations wait for it. */
  ready(): Promise<void>;
  /** What the operations behind the routes run against. */
  readonly operations: OperationContext;
  /** Served at `/api/metrics`; null when metrics are off. */
  readonly metrics: InboxMetrics | null;
}

/** What the admin API needs for one request. A null token disables it. */
export interface AdminContext {
  readonly host: AdminHost;
  readonly token: string | null;
  /** The TCP peer (for `X-Forwarded-Proto` from `http.trustedProxies`: the cookie's Secure). */
  readonly remoteAddress?: string | null;
  /** Whether the host writes streamed answers (the event stream); false: 501. */
  readonly canStream?: boolean;
}
