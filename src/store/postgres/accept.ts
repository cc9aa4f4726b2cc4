import type pg from "pg";
import { ulid } from "../../ids.ts";
import { versionlessSql } from "../core/ordering.ts";
import type { AcceptInput, AcceptResult } from "../types.ts";
import { appendAuditLeafPostgres } from "./audit.ts";
import { withTransaction } from "./connection.ts";
import { withPartition } from "./partitions.ts";
import type { SchemaNames } from "./schema-names.ts";

// One statement, one round trip, one commit: the dedup key (unless (source, dedup_key) is kept in
// event_dedup), the event, its receipt, its deliveries, and a NOTIFY for workers on every node
// when deliveries were created. event_dedup's primary key alone decides duplicates: events is
// partitioned by day, and a unique constraint across partitions would have to contain the id.
const acceptSql = (t: SchemaNames) => `
  WITH claim AS (
    INSERT INTO ${t.event_dedup} (source, dedup_key, event_id, received_at) VALUES ($2, $3, $1, $9)
    ON CONFLICT (source, dedup_key) DO NOTHING
    RETURNING event_id
  ), ins AS (
    INSERT INTO ${t.events} (id, source, dedup_key, type, occurred_at, ordering_key, version, status,
                        received_at, body, headers, secret_index)
    SELECT claim.event_id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12 FROM claim
    RETURNING id
  ), ev AS (
    SELECT id, false AS duplicate FROM ins
    UNION ALL
    SELECT d.event_id, true FROM ${t.event_dedup} d WHERE d.source = $2 AND d.dedup_key = $3 AND NOT EXISTS (SELECT 1 FROM claim)
  ), rc AS (
    INSERT INTO ${t.receipts} (id, event_id, source, received_at, duplicate, remote_address, size, secret_index)
    SELECT $13, ev.id, $2, $9, ev.duplicate, $14, $15, $12 FROM ev
  ), dl AS (
    INSERT INTO ${t.deliveries} (id, event_id, target, ordering_key, order_version, version, status, run_at,
                            created_at, updated_at)
    SELECT t.id, ins.id, t.target, $6, coalesce($7, ${versionlessSql}), $7, 'pending', $9, $9, $9
    FROM ins CROSS JOIN unnest($16::text[], $17::text[]) AS t (id, target)
    RETURNING 1
  ), notified AS (
    SELECT pg_notify($18, '') FROM (SELECT 1 FROM dl LIMIT 1) AS any_delivery
  )
  SELECT ev.id, ev.duplicate, (SELECT count(*) FROM dl)::int AS deliveries,
         (SELECT count(*) FROM notified)::int AS notified
  FROM ev`;

// The conflicting key was committed by a concurrent accept after this statement's snapshot was
// taken, so the CTE above could not see it; a new statement can.
const duplicateReceiptSql = (t: SchemaNames) => `
  INSERT INTO ${t.receipts} (id, event_id, source, received_at, duplicate, remote_address, size, secret_index)
  SELECT $1, d.event_id, $2, $4, true, $5, $6, $7 FROM ${t.event_dedup} d WHERE d.source = $2 AND d.dedup_key = $3
  RETURNING event_id`;

/**
 * Stores a receipt and, unless it exists, the event and its deliveries, in one statement that
 * commits before it resolves. PostgreSQL shares WAL flushes between concurrent commits, so
 * concurrent accepts are group-committed by the server. With `audit` on, the statement runs in a
 * transaction that ends, for a new event, by appending its leaf to the audit log (the tree row
 * is locked only for that append and the commit).
 *
 * @example
 * ```ts
 * const result = await acceptPostgres(pool, schemaNames("hookinbox"), "hookinbox_deliveries", input);
 * ```
 */
export async function acceptPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  channel: string,
  input: AcceptInput,
  audit = true,
): Promise<AcceptResult> {
  const { identity } = input;
  const receivedAt = Math.floor(input.receivedAt);
  const targets = input.targets ?? [];
  const body = Buffer.isBuffer(input.body)
    ? input.body
    : Buffer.from(input.body.buffer, input.body.byteOffset, input.body.byteLength);
  const receiptId = `rcp_${ulid(receivedAt)}`;
  const params = [
    `evt_${ulid(receivedAt)}`,
    input.source,
    identity.dedupKey,
    identity.type,
    identity.occurredAt === null ? null : Math.floor(identity.occurredAt),
    identity.orderingKey,
    identity.version,
    targets.length > 0 ? "pending" : "ignored",
    receivedAt,
    body,
    JSON.stringify(input.headers),
    input.secretIndex,
    receiptId,
    input.remoteAddress,
    input.body.byteLength,
    targets.map(() => `dlv_${ulid(receivedAt)}`),
    targets,
    channel,
  ];
  return withPartition(pool, t, [params[0] as string, receiptId], async () => {
    const statement = { name: "hookinbox_accept", text: acceptSql(t), values: params };
    type Row = { id: string; duplicate: boolean; deliveries: number };
    const result = audit
      ? await withTransaction(pool, async (client) => {
          const inserted = await client.query<Row>(statement);
          const first = inserted.rows[0];
          if (first && !first.duplicate) {
            await appendAuditLeafPostgres(client, t, first.id, {
              ...input,
              dedupKey: identity.dedupKey,
              receivedAt,
            });
          }
          return inserted;
        })
      : await pool.query<Row>(statement);
    const row = result.rows[0];
    if (row)
      return { eventId: row.id, receiptId, duplicate: row.duplicate, deliveries: row.deliveries };
    const raced = await pool.query<{ event_id: string }>({
      name: "hookinbox_accept_raced",
      text: duplicateReceiptSql(t),
      values: [
        receiptId,
        input.source,
        identity.dedupKey,
        receivedAt,
        input.remoteAddress,
        input.body.byteLength,
        input.secretIndex,
      ],
    });
    const eventId = raced.rows[0]?.event_id;
    if (!eventId) throw new Error("accept: conflicting event row not found");
    return { eventId, receiptId, duplicate: true, deliveries: 0 };
  });
}
