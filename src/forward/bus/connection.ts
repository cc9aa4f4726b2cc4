import type { Logger } from "../../log.ts";
import type { PostResult } from "../http-client.ts";
import { maskUrl, scrubPassword } from "./message.ts";
import { BusFailure, type BusMessage, type BusPublisher } from "./types.ts";

/** How a broker module opens, uses and closes its one connection. */
export interface BrokerDriver<C> {
  /** Opens a connection; calls `lost` once if the broker drops it later. Throws when unreachable. */
  open(lost: (error: Error | undefined) => void): Promise<C>;
  /** Publishes one message and resolves with the broker's receipt once it confirmed. */
  send(connection: C, message: BusMessage): Promise<string>;
  close(connection: C): Promise<void>;
}

const result = (latencyMs: number, fields: Partial<PostResult>): PostResult => ({
  status: null,
  headers: null,
  body: null,
  latencyMs,
  errorClass: null,
  error: null,
  refused: false,
  aborted: false,
  ...fields,
});

/**
 * A {@link BusPublisher} over one lazily opened connection, shared by every publish of the
 * destination in this process and opened again on the next publish after the broker dropped it
 * (or a publish failed on it). A publish waits for the broker's confirm up to `timeoutMs`; its
 * failures become results (`connect` while opening or timing out on the way in, `timeout`,
 * `reset`, `publish`), never exceptions, and their messages have the URL's password masked.
 *
 * @example
 * ```ts
 * const publisher = sharedConnectionPublisher("redis://127.0.0.1:6379", redisDriver(settings), logger, "bus");
 * await publisher.publish(message, 5000, signal); // { status: null, errorClass: null, body: "1733…-0", … }
 * ```
 */
export function sharedConnectionPublisher<C>(
  url: string,
  driver: BrokerDriver<C>,
  logger: Logger,
  destination: string,
): BusPublisher {
  let current: Promise<C> | null = null;
  const shown = maskUrl(url);
  const drop = (pending: Promise<C>, why: string) => {
    if (current !== pending) return;
    current = null;
    logger.warn({ target: destination, broker: shown, err: why }, "broker connection dropped");
    pending.then((c) => driver.close(c)).catch(() => undefined);
  };
  const connection = (): Promise<C> => {
    if (current) return current;
    const opening: Promise<C> = driver.open((error) =>
      drop(opening, scrubPassword(error?.message ?? "closed", url)),
    );
    current = opening;
    opening.catch(() => {
      if (current === opening) current = null;
    });
    return opening;
  };
  return {
    async publish(message, timeoutMs, signal) {
      const started = performance.now();
      const elapsed = () => performance.now() - started;
      let phase: "connect" | "publish" = "connect";
      let pending: Promise<C> | null = null;
      const work = (async () => {
        pending = connection();
        const c = await pending;
        phase = "publish";
        return driver.send(c, message);
      })();
      work.catch(() => undefined);
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const stop = new Promise<"timeout" | "aborted">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), timeoutMs);
        onAbort = () => resolve("aborted");
        signal.addEventListener("abort", onAbort, { once: true });
      });
      try {
        const first = await Promise.race([work, stop]);
        if (first === "aborted") return result(elapsed(), { aborted: true, error: "aborted" });
        if (first === "timeout") {
          // A connection that neither opens nor confirms in time is not trusted for the next try.
          if (pending) drop(pending, `no ${phase} answer within ${timeoutMs} ms`);
          return result(elapsed(), {
            errorClass: phase === "connect" ? "connect" : "timeout",
            error: `the broker did not ${phase === "connect" ? "connect" : "confirm"} within ${timeoutMs} ms`,
          });
        }
        return result(elapsed(), { body: first });
      } catch (error) {
        const failure = error instanceof BusFailure ? error : null;
        const errorClass = phase === "connect" ? "connect" : (failure?.errorClass ?? "reset");
        if (pending && errorClass !== "publish") drop(pending, (error as Error).message);
        return result(elapsed(), {
          errorClass,
          error: scrubPassword((error as Error).message ?? String(error), url),
        });
      } finally {
        clearTimeout(timer);
        if (onAbort) signal.removeEventListener("abort", onAbort);
      }
    },
    async close() {
      const open = current;
      current = null;
      if (open) await open.then((c) => driver.close(c)).catch(() => undefined);
    },
  };
}
