import type { ClaimedDelivery } from "../store/queue-types.ts";

/** One delivery a worker is running: its lease length and the signal that stops its handler. */
export interface Running {
  readonly delivery: ClaimedDelivery;
  readonly abort: AbortController;
  readonly leaseMs: number;
}

/** The deliveries a worker is running, and a way to wait until there are none. */
export interface InFlight {
  readonly size: number;
  add(running: Running): void;
  get(id: string): Running | undefined;
  delete(id: string): void;
  values(): IterableIterator<Running>;
  /** Resolves true once nothing runs, or false after `timeoutMs` with something still running. */
  settled(timeoutMs: number): Promise<boolean>;
}

/**
 * The worker's running deliveries by id.
 *
 * @example
 * ```ts
 * const inFlight = createInFlight();
 * inFlight.add({ delivery, abort: new AbortController(), leaseMs: 30_000 });
 * inFlight.delete(delivery.id);
 * await inFlight.settled(30_000); // true
 * ```
 */
export function createInFlight(): InFlight {
  const running = new Map<string, Running>();
  let waiters: Array<() => void> = [];
  return {
    get size() {
      return running.size;
    },
    add: (entry) => void running.set(entry.delivery.id, entry),
    get: (id) => running.get(id),
    delete(id) {
      running.delete(id);
      if (running.size === 0) for (const resolve of waiters.splice(0)) resolve();
    },
    values: () => running.values(),
    async settled(timeoutMs) {
      if (running.size === 0) return true;
      let timer: NodeJS.Timeout | undefined;
      let resolveEmpty: () => void = () => undefined;
      const empty = new Promise<true>((resolve) => {
        resolveEmpty = () => resolve(true);
        waiters.push(resolveEmpty);
      });
      const late = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const result = await Promise.race([empty, late]);
      clearTimeout(timer);
      waiters = waiters.filter((waiter) => waiter !== resolveEmpty);
      return result;
    },
  };
}
