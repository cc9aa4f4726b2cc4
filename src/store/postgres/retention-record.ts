import type pg from "pg";
import { retentionLeafId } from "../../audit/retention-record.ts";
import { ulid } from "../../ids.ts";
import type { RetentionStepInput } from "../retention-types.ts";
import { retentionLeafParts } from "./audit.ts";
import type { SchemaNames } from "./schema-names.ts";

// What retention leaves in the audit log on PostgreSQL, in the transaction that deletes: the
// retention leaf recording a deletion, and the first receipts' fields kept for verify.

/**
 * What one deletion removed: how many rows and its first and last id.
 *
 * @example
 * ```ts
 * const deleted: Deleted = { n: 3, first: "evt_01J…A", last: "evt_01J…C" };
 * ```
 */
export interface Deleted {
  readonly n: number;
  readonly first: string | null;
  readonly last: string | null;
}

/**
 * Before accepted receipts go (`from`: the rows, `where`: which), keeps the remote address and
 * secret index of each first receipt whose event stays, under the event's `first_receipt:` mark,
 * so verify can still recompute the event's leaf.
 *
 * @example
 * ```ts
 * await keepFirstReceipts(client, t, `${t.schema}."receipts_accepted_p20260101"`, "true", []);
 * ```
 */
export async function keepFirstReceipts(
  client: pg.PoolClient,
  t: SchemaNames,
  from: string,
  where: string,
  values: unknown[],
) {
  await client.query(
    `INSERT INTO ${t.retention_marks} (name, value)
     SELECT 'first_receipt:' || r.event_id,
            json_build_object('remoteAddress', r.remote_address, 'secretIndex', r.secret_index)::text
     FROM ${from} r JOIN ${t.events} e ON e.id = r.event_id
     WHERE ${where} AND NOT r.duplicate AND r.id = 'rcp_' || substr(e.id, 5)
     ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
    values,
  );
}

/**
 * Drops the `first_receipt:` marks of events about to go (`where` over `name`).
 *
 * @example
 * ```ts
 * await dropFirstReceiptMarks(client, t, "name = ANY(SELECT 'first_receipt:' || unnest($1::text[]))", [ids]);
 * ```
 */
export async function dropFirstReceiptMarks(
  client: pg.PoolClient,
  t: SchemaNames,
  where: string,
  values: unknown[],
) {
  await client.query(`DELETE FROM ${t.retention_marks} WHERE ${where}`, values);
}

/**
 * Appends the retention leaf recording a deletion of events or accepted receipts (the audit log
 * on and something deleted), through hookinbox_audit_append_leaves in the caller's transaction.
 *
 * @example
 * ```ts
 * await recordDeletion(client, t, input, "events", { n: ids.length, first: ids[0], last: ids.at(-1) });
 * ```
 */
export async function recordDeletion(
  client: pg.PoolClient,
  t: SchemaNames,
  input: RetentionStepInput,
  kind: "events" | "receipts",
  deleted: Deleted,
) {
  if (!input.audit || deleted.n === 0 || deleted.first === null || deleted.last === null) return;
  const fields = {
    kind,
    firstId: deleted.first,
    lastId: deleted.last,
    removed: deleted.n,
    cut: Math.floor(input.before),
  };
  const [prefix, rest] = retentionLeafParts(fields);
  await client.query(
    `SELECT ${t.hookinbox_audit_append_leaves}(ARRAY[$1::text], ARRAY[$2::bytea], ARRAY[$3::bytea])`,
    [retentionLeafId(ulid(input.now), fields), prefix, rest],
  );
}
