import pg from "pg";
import type { PostgresUrl } from "./connection.ts";

/**
 * A dedicated connection that LISTENs on the store's channel and calls `onNotify` for each
 * notification (a commit created deliveries somewhere in the cluster). It reconnects by itself
 * with backoff when the connection drops (server restart), and calls `onNotify` once after each
 * reconnect, since notifications sent while it was away are lost.
 *
 * @example
 * ```ts
 * const stop = listenForDeliveries(url, "hookinbox_deliveries_hookinbox", () => worker.notify(), log);
 * ```
 */
export function listenForDeliveries(
  url: PostgresUrl & { readonly listenUrl: string },
  channel: string,
  onNotify: () => void,
  onError: (error: Error) => void,
): () => Promise<void> {
  let client: pg.Client | null = null;
  let stopped = false;
  let retryMs = 100;
  let timer: NodeJS.Timeout | undefined;

  const connect = async () => {
    if (stopped) return;
    const next = new pg.Client({
      connectionString: url.listenUrl,
      application_name: "hookinbox-listen",
    });
    next.on("notification", () => onNotify());
    next.on("error", (error) => {
      onError(error);
      next.end().catch(() => undefined);
    });
    next.on("end", () => {
      if (client === next) client = null;
      schedule();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
      if (stopped) {
        await next.end();
        return;
      }
      client = next;
      retryMs = 100;
      onNotify();
    } catch (error) {
      onError(error as Error);
      next.end().catch(() => undefined);
      schedule();
    }
  };

  const schedule = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, retryMs);
    timer.unref?.();
    retryMs = Math.min(retryMs * 2, 5000);
  };

  void connect();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await client?.end().catch(() => undefined);
  };
}
