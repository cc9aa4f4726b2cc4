import { hookinboxError } from "../../errors.ts";

/**
 * A store's open/closed state and the work under way, written once for every driver: work
 * started after `close()` is refused with HOOKINBOX_STORE_CLOSED, and `close()` waits for every
 * operation already started (reads included) before the driver releases its connections.
 *
 * @example
 * ```ts
 * const life = storeLifecycle();
 * const page = await life.run(() => pool.query("SELECT 1"));
 * await life.close(() => pool.end());
 * ```
 */
export function storeLifecycle() {
  let closed = false;
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    work.finally(() => inFlight.delete(work)).catch(() => undefined);
    return work;
  };
  return {
    /** True once `close()` was called. */
    get closed(): boolean {
      return closed;
    },
    /** Throws HOOKINBOX_STORE_CLOSED once closed. */
    assertOpen(): void {
      if (closed) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
    },
    /** Runs `work` unless closed, and keeps it in flight until it settles. */
    async run<T>(work: () => Promise<T>): Promise<T> {
      if (closed) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
      return track(work());
    },
    /**
     * Refuses new work, waits for the work in flight (each settles, fulfilled or not), then runs
     * `release` once. A second call resolves at once.
     */
    async close(release: () => Promise<void>): Promise<void> {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...inFlight]);
      await release();
    },
  };
}
