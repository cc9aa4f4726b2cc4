import type pg from "pg";
import { hookinboxError } from "../../../errors.ts";
import { batchOrEachAlone, gatherBatches } from "../../core/gather-batches.ts";
import type { CompleteInput } from "../../queue-types.ts";
import type { SchemaNames } from "../schema-names.ts";
import { completeManyPostgres, completePostgres } from "./complete-delivery.ts";
import { endingKey } from "./end-attempt.ts";

/** The most completions one batch ends (one statement's arrays): a prefetching worker's claim. */
const maxBatch = 500;

/**
 * `completeDelivery` without handler SQL, batched: completions that arrive while two batches
 * are in flight end together, in one statement or one round trip (complete-delivery.ts).
 * Each caller learns its own outcome: HOOKINBOX_LEASE_LOST only for a delivery whose lease was
 * lost. When a whole batch fails, each of its deliveries is ended alone, so one bad delivery
 * fails alone.
 *
 * @example
 * ```ts
 * const complete = completeBatchPostgres(pool, schemaNames("hookinbox"));
 * await complete({ deliveryId, workerId, attempt: 1, now: Date.now(), orderingKey: null });
 * ```
 */
export function completeBatchPostgres(
  pool: pg.Pool,
  t: SchemaNames,
): (input: CompleteInput) => Promise<undefined> {
  const alone = async (input: CompleteInput): Promise<undefined> => {
    await completePostgres(pool, t, input, "done");
  };
  return gatherBatches<CompleteInput, undefined>(
    batchOrEachAlone<CompleteInput, undefined>(async (inputs) => {
      const ended = await completeManyPostgres(pool, t, inputs, "done");
      return inputs.map((input) =>
        ended.has(endingKey(input))
          ? { ok: true, value: undefined }
          : { ok: false, error: hookinboxError("HOOKINBOX_LEASE_LOST", input.deliveryId) },
      );
    }, alone),
    { maxBatch, maxInFlight: 2 },
  );
}
