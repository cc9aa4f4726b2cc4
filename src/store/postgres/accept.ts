import type pg from "pg";
import { ulid } from "../../ids.ts";
import { batchOrEachAlone, gatherBatches } from "../core/gather-batches.ts";
import { versionlessSql } from "../core/ordering.ts";
import type { AcceptInput, AcceptResult } from "../types.ts";
import { auditLeafValues, receiptLeafParts } from "./audit.ts";
import { byteaArrayParam } from "./binary-array.ts";
import { withPartition } from "./partitions.ts";
import type { SchemaNames } from "./schema-names.ts";

// One statement for a whole batch of accepts: the dedup keys (event_dedup's primary key alone
// decides duplicates: events is partitioned by day, and a unique constraint across partitions
// would have to contain the id), the new events, one receipt per accept, the deliveries, and one
// NOTIFY for workers on every node when deliveries were created. Rows come back numbered as the
// input ($15 is each accept's number in the batch).
//
// With the audit log on, the same statement also queues the new events' leaves and the
// duplicates' receipt leaves in audit_pending (migration 014), in input order, unsequenced: the
// sequencer (audit-sequence.ts, one lease holder across processes) numbers them and extends the
// tree later, within audit.maxMergeDelay. So an accept locks no shared row: concurrent batches
// and gateways commit side by side, and a 2xx still means the leaf is durably queued for the log.
// (Until migration 014 this statement appended to the tree itself, holding its one row from the
// append to the end of the commit's flush: every accept of every gateway in one line.) The
// leaves' bytes after their sequence number are made by the gateway for every accept ($22,
// aligned with the input; a duplicate's are ignored).
const acceptBatchSql = (t: SchemaNames, audit: boolean) => `
  WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[],
                         $7::double precision[], $8::text[], $9::bigint[], $10::bytea[], $11::text[],
                         $12::integer[], $13::text[], $14::text[], $15::integer[], $16::integer[]${
                           audit ? ", $22::bytea[], $24::bytea[]" : ""
                         }, ${audit ? "$25" : "$21"}::text[])
      AS i (id, source, dedup_key, type, occurred_at, ordering_key, version, status, received_at,
            body, headers, secret_index, receipt_id, remote_address, size, n${audit ? ", leaf_rest, receipt_rest" : ""},
            traceparent)
  ), claim AS (
    INSERT INTO ${t.event_dedup} (source, dedup_key, event_id, received_at)
    SELECT source, dedup_key, id, received_at FROM input ORDER BY source, dedup_key
    ON CONFLICT (source, dedup_key) DO NOTHING
    RETURNING event_id
  ), ins AS (
    INSERT INTO ${t.events} (id, source, dedup_key, type, occurred_at, ordering_key, version, status,
                        received_at, body, headers, secret_index, traceparent)
    SELECT i.id, i.source, i.dedup_key, i.type, i.occurred_at, i.ordering_key, i.version, i.status,
           i.received_at, i.body, i.headers::jsonb, i.secret_index, i.traceparent
    FROM input i JOIN claim c ON c.event_id = i.id
    RETURNING id
  ), ev AS (
    SELECT i.n, i.id, false AS duplicate FROM input i JOIN ins ON ins.id = i.id
    UNION ALL
    SELECT i.n, d.event_id, true FROM input i
    JOIN ${t.event_dedup} d ON d.source = i.source AND d.dedup_key = i.dedup_key
    WHERE NOT EXISTS (SELECT 1 FROM claim c WHERE c.event_id = i.id)
  ), rc AS (
    INSERT INTO ${t.receipts} (id, event_id, source, received_at, duplicate, remote_address, size, secret_index)
    SELECT i.receipt_id, ev.id, i.source, i.received_at, ev.duplicate, i.remote_address, i.size, i.secret_index
    FROM ev JOIN input i ON i.n = ev.n
    RETURNING id
  ), dl AS (
    INSERT INTO ${t.deliveries} (id, event_id, target, ordering_key, order_version, version, status, run_at,
                            created_at, updated_at)
    SELECT d.id, i.id, d.target, i.ordering_key, coalesce(i.version, ${versionlessSql}), i.version,
           'pending', i.received_at, i.received_at, i.received_at
    FROM unnest($17::text[], $18::text[], $19::integer[]) AS d (id, target, n)
    JOIN input i ON i.n = d.n JOIN ins ON ins.id = i.id
    RETURNING event_id
  ), notified AS (
    SELECT pg_notify($20, '') FROM (SELECT 1 FROM dl LIMIT 1) AS any_delivery
  )${
    audit
      ? `, pended AS (
    INSERT INTO ${t.audit_pending} (leaf_id, prefix, rest)
    SELECT CASE WHEN ev.duplicate THEN i.receipt_id ELSE i.id END,
           CASE WHEN ev.duplicate THEN $23::bytea ELSE $21::bytea END,
           CASE WHEN ev.duplicate THEN i.receipt_rest ELSE i.leaf_rest END
    FROM input i JOIN ev ON ev.n = i.n ORDER BY i.n
    RETURNING 1
  )`
      : ""
  }
  SELECT ev.n, ev.id, ev.duplicate,
         (SELECT count(*) FROM dl WHERE dl.event_id = ev.id)::int AS deliveries,
         (SELECT count(*) FROM notified)::int AS notified
  FROM ev`;

// The conflicting key was committed by a concurrent accept after the batch statement's snapshot
// was taken, so the statement could not see it; a new statement can.
// With the audit log on, the receipt's leaf is queued by the same statement, after the insert.
const duplicateReceiptSql = (t: SchemaNames, audit: boolean) => `
  WITH rc AS (
    INSERT INTO ${t.receipts} (id, event_id, source, received_at, duplicate, remote_address, size, secret_index)
    SELECT $1, d.event_id, $2, $4, true, $5, $6, $7 FROM ${t.event_dedup} d WHERE d.source = $2 AND d.dedup_key = $3
    RETURNING event_id
  )${
    audit
      ? `, pended AS (
    INSERT INTO ${t.audit_pending} (leaf_id, prefix, rest) SELECT $1, $8, $9 FROM rc
    RETURNING 1
  )`
      : ""
  }
  SELECT rc.event_id FROM rc`;

/** An accept as the batch statement takes it: its ids made, its receive time whole ms. */
interface Prepared {
  readonly input: AcceptInput;
  readonly eventId: string;
  readonly receiptId: string;
  readonly receivedAt: number;
  readonly body: Buffer;
  readonly deliveryIds: readonly string[];
}

const prepare = (input: AcceptInput): Prepared => {
  const receivedAt = Math.floor(input.receivedAt);
  const body = Buffer.isBuffer(input.body)
    ? input.body
    : Buffer.from(input.body.buffer, input.body.byteOffset, input.body.byteLength);
  // One ULID for both: a first receipt's id is its event's with `rcp_` (src/audit/retention-record.ts).
  const id = ulid(receivedAt);
  return {
    input,
    eventId: `evt_${id}`,
    receiptId: `rcp_${id}`,
    receivedAt,
    body,
    deliveryIds: (input.targets ?? []).map(() => `dlv_${ulid(receivedAt)}`),
  };
};

const batchValues = (batch: readonly Prepared[], channel: string, audit: boolean): unknown[] => {
  const column = <V>(pick: (p: Prepared) => V) => batch.map(pick);
  const deliveries = batch.flatMap((p, n) =>
    (p.input.targets ?? []).map((target, k) => ({ id: p.deliveryIds[k], target, n })),
  );
  return [
    column((p) => p.eventId),
    column((p) => p.input.source),
    column((p) => p.input.identity.dedupKey),
    column((p) => p.input.identity.type),
    column((p) =>
      p.input.identity.occurredAt === null ? null : Math.floor(p.input.identity.occurredAt),
    ),
    column((p) => p.input.identity.orderingKey),
    column((p) => p.input.identity.version),
    column((p) => ((p.input.targets ?? []).length > 0 ? "pending" : "ignored")),
    column((p) => p.receivedAt),
    byteaArrayParam(batch.map((p) => p.body)),
    column((p) => JSON.stringify(p.input.headers)),
    column((p) => p.input.secretIndex),
    column((p) => p.receiptId),
    column((p) => p.input.remoteAddress),
    column((p) => p.input.body.byteLength),
    batch.map((_, n) => n),
    deliveries.map((d) => d.id),
    deliveries.map((d) => d.target),
    deliveries.map((d) => d.n),
    channel,
    ...(audit ? auditValues(batch) : []),
    // Last ($21, or $25 after the audit's four), so the numbers before it stay as they were.
    column((p) => p.input.traceparent ?? null),
  ];
};

/** The prefix (0x00, version byte) and rest after the seq of a duplicate's receipt leaf. */
const receiptLeafValues = (p: Prepared): [prefix: Buffer, rest: Buffer] =>
  receiptLeafParts({
    receiptId: p.receiptId,
    source: p.input.source,
    dedupKey: p.input.identity.dedupKey,
    receivedAt: p.receivedAt,
    remoteAddress: p.input.remoteAddress,
    secretIndex: p.input.secretIndex,
    size: p.input.body.byteLength,
  });

// $21-$24: what audit_pending stores: per accept its event leaf's rest ($22) and its
// receipt leaf's rest ($24, used when it is a duplicate), as binary like the bodies, and the two
// prefixes ($21, $23).
const auditValues = (batch: readonly Prepared[]): unknown[] => {
  const [prefix, rests] = auditLeafValues(
    batch.map((p) => ({
      source: p.input.source,
      dedupKey: p.input.identity.dedupKey,
      receivedAt: p.receivedAt,
      body: p.body,
      headers: p.input.headers,
      receiptId: p.receiptId,
      remoteAddress: p.input.remoteAddress,
      secretIndex: p.input.secretIndex,
    })),
  );
  const receipts = batch.map(receiptLeafValues);
  return [
    prefix,
    byteaArrayParam(rests),
    receipts[0]?.[0] ?? receiptLeafParts(null)[0],
    byteaArrayParam(receipts.map((r) => r[1])),
  ];
};

type Row = { n: number; id: string; duplicate: boolean; deliveries: number };

/**
 * Accepts a batch and commits before it resolves: one statement, alone in its transaction, for
 * all of it (with `audit` on, the new events' leaves queued in audit_pending in input order by
 * that same statement, for the sequencer to append); then, for a new
 * event whose key a concurrent accept committed after that statement began, a duplicate receipt
 * in a statement of its own. Without such a race it is one round trip and one commit, audit on or
 * off. The batch must not hold one (source, dedup key) twice. Returns one result per input, in
 * input order.
 *
 * @example
 * ```ts
 * const [result] = await acceptBatchPostgres(pool, schemaNames("hookinbox"), "hookinbox_deliveries", [input], true);
 * ```
 */
export function acceptBatchPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  channel: string,
  inputs: readonly AcceptInput[],
  audit: boolean,
): Promise<AcceptResult[]> {
  return storeBatch(pool, t, channel, inputs.map(prepare), audit);
}

async function storeBatch(
  pool: pg.Pool,
  t: SchemaNames,
  channel: string,
  batch: readonly Prepared[],
  audit: boolean,
): Promise<AcceptResult[]> {
  const statement = {
    name: audit ? "hookinbox_accept_batch_audit" : "hookinbox_accept_batch",
    text: acceptBatchSql(t, audit),
    values: batchValues(batch, channel, audit),
  };
  const ids = batch.flatMap((p) => [p.eventId, p.receiptId]);
  const accept = async () => {
    const rows = new Map((await pool.query<Row>(statement)).rows.map((r) => [r.n, r]));
    const results: AcceptResult[] = [];
    for (const [n, p] of batch.entries()) {
      const row = rows.get(n);
      if (row) {
        results.push({
          eventId: row.id,
          receiptId: p.receiptId,
          duplicate: row.duplicate,
          deliveries: row.deliveries,
        });
        continue;
      }
      const raced = await pool.query<{ event_id: string }>({
        name: audit ? "hookinbox_accept_raced_audit" : "hookinbox_accept_raced",
        text: duplicateReceiptSql(t, audit),
        values: [
          p.receiptId,
          p.input.source,
          p.input.identity.dedupKey,
          p.receivedAt,
          p.input.remoteAddress,
          p.input.body.byteLength,
          p.input.secretIndex,
          ...(audit ? receiptLeafValues(p) : []),
        ],
      });
      const eventId = raced.rows[0]?.event_id;
      if (!eventId) throw new Error("accept: conflicting event row not found");
      results.push({ eventId, receiptId: p.receiptId, duplicate: true, deliveries: 0 });
    }
    return results;
  };
  return withPartition(pool, t, ids, accept);
}

/** At most this many accepts, and about this many body bytes, go in one batch. */
const maxBatch = 64;
const maxBatchBytes = 4 * 1024 * 1024;
// Batches running at once. Without the audit log, 4: their commits overlap and share WAL
// flushes. With it, 2: every batch holds the one tree row from its append to the end of its
// commit's flush, so batches commit one after another anyway, and one waiting for the row while
// the other commits is all the overlap there is; a third and fourth only waited for the row, in
// smaller batches. Measured (bench/postgres/audit-ab.ts, log on, 4 → 2 in flight): 10-12 → 15-17
// accepts per commit, PostgreSQL CPU per accept -20 to -60 µs, the gateway's -20 to -30 µs.
const maxInFlight = 4;
const maxInFlightAudited = 2;

const sameKey = (a: Prepared, b: Prepared) =>
  a.input.source === b.input.source && a.input.identity.dedupKey === b.input.identity.dedupKey;

/**
 * The PostgreSQL accept path: concurrent accepts are gathered (the accepts of one event-loop turn,
 * and those arriving while 4 batches, 2 with the audit log on, are in flight) into batches of up to 64, each stored by
 * `acceptBatchPostgres` and acknowledged only after its commit. A second accept of a key already
 * in the batch waits for the next one (where it is a duplicate, exactly as if it came later).
 * When a batch fails, each of its accepts is tried alone, so one bad accept fails alone. An
 * accept's ids are made when it is called, not when its batch leaves: one that waited behind
 * batches in flight keeps the time prefix (and so the day partition) of its own receive time,
 * instead of being clamped forward to ids made meanwhile for later receive times.
 *
 * @example
 * ```ts
 * const accept = acceptPostgres(pool, schemaNames("hookinbox"), "hookinbox_deliveries", true);
 * const result = await accept(input);
 * ```
 */
export function acceptPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  channel: string,
  audit: boolean,
): (input: AcceptInput) => Promise<AcceptResult> {
  const one = async (item: Prepared): Promise<AcceptResult> =>
    (await storeBatch(pool, t, channel, [item], audit))[0] as AcceptResult;
  const gathered = gatherBatches<Prepared, AcceptResult>(
    batchOrEachAlone(async (items) => {
      const results = await storeBatch(pool, t, channel, items, audit);
      return results.map((value) => ({ ok: true, value }));
    }, one),
    { maxBatch, maxInFlight: audit ? maxInFlightAudited : maxInFlight },
    (item, batch) =>
      !batch.some((other) => sameKey(item, other)) &&
      batch.reduce((bytes, other) => bytes + other.body.byteLength, item.body.byteLength) <=
        Math.max(maxBatchBytes, item.body.byteLength),
  );
  return (input) => gathered(prepare(input));
}
