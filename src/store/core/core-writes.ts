import type { Store } from "../types.ts";
import { alertWrites, type CoreAlertWrites } from "./alert-writes.ts";
import { type CoreCircuitWrites, circuitWrites } from "./circuit-writes.ts";
import { type CoreQueueWrites, queueWrites } from "./queue-writes.ts";
import type { WriteDriver } from "./write-driver.ts";

/** Every Store write core implements over a driver's `execute` primitive (drivers leave them out). */
export type CoreStoreWrites = CoreAlertWrites | "markAlerted" | CoreCircuitWrites | CoreQueueWrites;

/**
 * The Store's writes that are one rule each, implemented once here over the driver's `execute`
 * primitive: the alert outbox's claim, prune and settle, the dead-letter alert mark, the
 * destinations' rate window and circuit breaker counters, lease heartbeats and abandoned
 * handlers, completing and releasing effects, and storing signed tree heads. A driver spreads them into its Store.
 *
 * @example
 * ```ts
 * const writes = storeWrites({ dialect: "sqlite", table: (name) => name, execute });
 * await writes.takeRateSlot("app", windowStart, 50);
 * ```
 */
export function storeWrites(driver: WriteDriver): Pick<Store, CoreStoreWrites> {
  return { ...alertWrites(driver), ...circuitWrites(driver), ...queueWrites(driver) };
}
