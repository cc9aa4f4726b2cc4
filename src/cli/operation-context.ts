import type { HookinboxConfig } from "../config/index.ts";
import { createInbox } from "../inbox.ts";
import type { OperationContext } from "../operations/operation.ts";
import {
  type CliContext,
  loadDestinations,
  loadRawConfig,
  loadRunbooks,
  loadSourceNames,
  openConfiguredStore,
} from "./context.ts";

/**
 * How a command reaches the store: `read` checks the schema and never migrates (a store that is
 * behind fails with HOOKINBOX_SCHEMA_BEHIND and is left as it was); `write` migrates first, as
 * the gateway does; `inbox` builds the inbox from the config (replays need the handlers' routes,
 * so the sources' secrets must be set).
 */
export type StoreAccess = "read" | "write" | "inbox";

/**
 * Runs `fn` with an operation context for the config at `configPath` (runbooks, destinations,
 * source names, the store opened as `access` says), closing what it opened afterwards.
 *
 * @example
 * ```ts
 * const page = await withOperations(ctx, values.config, "read", (ops) => listEvents.run(ops, {}));
 * ```
 */
export async function withOperations<T>(
  ctx: CliContext,
  configPath: string | undefined,
  access: StoreAccess,
  fn: (operations: OperationContext) => Promise<T>,
  onProgress?: (done: number, total: number) => void,
): Promise<T> {
  const progress = onProgress ? { onProgress } : {};
  if (access === "inbox") {
    const raw = await loadRawConfig(ctx, configPath);
    // A config file is checked at run time (resolveConfig), not by its static type.
    const inbox = createInbox(raw.config as HookinboxConfig, { env: ctx.env });
    try {
      await inbox.ready();
      return await fn({ ...inbox.operations, ...progress });
    } finally {
      await inbox.close();
    }
  }
  const runbooks = await loadRunbooks(ctx, configPath);
  const destinations = await loadDestinations(ctx, configPath);
  const sources = await loadSourceNames(ctx, configPath);
  const store = await openConfiguredStore(ctx, configPath, { readOnly: access === "read" });
  try {
    return await fn({ store, runbooks, destinations, sources, now: Date.now, ...progress });
  } finally {
    await store.close();
  }
}
