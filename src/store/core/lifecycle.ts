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
  /** Runs `work` unless closed, and keeps it in flight until it settles. */
  const run = async <T>(work: () => Promise<T>): Promise<T> => {
    if (closed) throw hookinboxError("HOOKINBOX_STORE_CLOSED");
    return track(work());
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
    run,
    /**
     * `target` with each method but those named in `direct` run through `run`: a driver whose
     * methods all return promises is guarded without naming each one.
     */
    guard<T extends object>(target: T, direct: ReadonlyArray<keyof T>): T {
      const guarded = { ...target } as Record<PropertyKey, unknown>;
      for (const [key, value] of Object.entries(target)) {
        if (typeof value !== "function" || direct.includes(key as keyof T)) continue;
        guarded[key] = (...args: unknown[]) => run(() => value.apply(guarded, args));
      }
      return guarded as T;
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
