import { hookinboxError, isHookinboxError } from "../errors.ts";
import type { DeliveryView, QueueStore } from "../store/queue-types.ts";
import type { Runbooks } from "./runbook-lookup.ts";

/** What a bulk "run now" did. */
export interface BulkRetryResult {
  /** Put back (dead) or made due now (pending, or the head blocking a blocked one). */
  readonly retried: number;
  /** Gone, running or finished by the time it was reached. */
  readonly skipped: number;
}

/**
 * Refuses a bulk retry that includes an event type whose runbook says it is not safe to
 * reprocess, unless the operator overrides (HOOKINBOX_UNSAFE_TO_REPROCESS names the types).
 *
 * @example
 * ```ts
 * checkSafeToReprocess(deliveries, config.runbooks, false); // throws when a runbook says no
 * ```
 */
export function checkSafeToReprocess(
  deliveries: readonly Pick<DeliveryView, "source" | "type">[],
  runbooks: Runbooks,
  override: boolean,
): void {
  if (override) return;
  const unsafe = unsafeTypes(deliveries, runbooks);
  if (unsafe.length > 0) {
    throw hookinboxError(
      "HOOKINBOX_UNSAFE_TO_REPROCESS",
      `${unsafe.join(", ")}: read the runbook, then retry one by one or override`,
    );
  }
}

/**
 * The `source:type`s among `deliveries` whose runbook says they are not safe to reprocess.
 *
 * @example
 * ```ts
 * unsafeTypes([{ source: "stripe", type: "charge.refunded" }], runbooks); // ["stripe:charge.refunded"]
 * ```
 */
export function unsafeTypes(
  deliveries: readonly Pick<DeliveryView, "source" | "type">[],
  runbooks: Runbooks,
): string[] {
  const unsafe = new Set<string>();
  for (const d of deliveries) {
    if (runbooks.for(d.source, d.type)?.safeToReprocess === false)
      unsafe.add(`${d.source}:${d.type ?? "-"}`);
  }
  return [...unsafe];
}

/**
 * Runs deliveries now, one after another, reporting progress: those that are no longer pending,
 * blocked or dead (someone else retried them, a worker finished them) are skipped, not errors.
 *
 * @example
 * ```ts
 * await retryDeliveries(store, ids, Date.now(), (done) => bar.update(done));
 * ```
 */
export async function retryDeliveries(
  store: QueueStore,
  ids: readonly string[],
  now: number,
  onProgress?: (done: number) => void,
): Promise<BulkRetryResult> {
  let retried = 0;
  let skipped = 0;
  for (const id of ids) {
    try {
      if ((await store.retryDelivery(id, now)) !== null) retried++;
      else skipped++;
    } catch (error) {
      if (!isHookinboxError(error, "HOOKINBOX_DELIVERY_NOT_RETRYABLE")) throw error;
      skipped++;
    }
    onProgress?.(retried + skipped);
  }
  return { retried, skipped };
}
