import type pg from "pg";
import type { CompleteInput } from "../../queue-types.ts";
import type { SchemaNames } from "../schema-names.ts";
import { keyLockId } from "./key-locks.ts";

/** The running delivery an attempt ends, as the lock step found it. */
export interface EndingDelivery {
  readonly eventId: string;
  readonly target: string;
  readonly orderingKey: string | null;
  readonly version: number | null;
}

/**
 * The lock step shared by completion and failure (see key-locks.ts): the delivery's row, if the
 * caller still holds its lease (FOR UPDATE), and its key's advisory lock (waited for). The
 * statement that changes the key must come after this one, in the same transaction.
 *
 * @example
 * ```ts
 * const ending = await lockEndingDelivery(client, t, input);
 * if (!ending) throw hookinboxError("HOOKINBOX_LEASE_LOST", input.deliveryId);
 * ```
 */
export async function lockEndingDelivery(
  client: pg.ClientBase,
  t: SchemaNames,
  input: CompleteInput,
): Promise<EndingDelivery | null> {
  const { rows } = await client.query({
    name: "hookinbox_end_lock",
    text: `SELECT d.event_id, d.target, d.ordering_key, d.version,
                  CASE WHEN d.ordering_key IS NOT NULL
                       THEN pg_advisory_xact_lock(${keyLockId("d.target", "d.ordering_key")}) END AS locked
           FROM ${t.deliveries} d
           WHERE d.id = $1 AND d.status = 'running' AND d.lease_owner = $2 AND d.attempts = $3
           FOR UPDATE`,
    values: [input.deliveryId, input.workerId, input.attempt],
  });
  const row = rows[0];
  if (!row) return null;
  return {
    eventId: row.event_id,
    target: row.target,
    orderingKey: row.ordering_key,
    version: row.version,
  };
}
