import type pg from "pg";
import type { AcceptOutcome, AcceptPlan } from "../core/accept-driver.ts";
import { batchOrEachAlone, gatherBatches } from "../core/gather-batches.ts";
import type { SqlResult, SqlStatement } from "../core/sql-template.ts";
import { auditLeafValues, receiptLeafParts } from "./audit.ts";
import { byteaArrayParam } from "./binary-array.ts";
import { withTransaction } from "./connection.ts";
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
                         }, ${audit ? "$25" : "$21"}::text[], ${audit ? "$26" : "$22"}::double precision[])
      AS i (id, source, dedup_key, type, occurred_at, ordering_key, version, status, received_at,
            body, headers, secret_index, receipt_id, remote_address, size, n${audit ? ", leaf_rest, receipt_rest" : ""},
            traceparent, order_version)
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
    SELECT d.id, i.id, d.target, i.ordering_key, i.order_version, i.version,
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

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

const batchValues = (batch: readonly AcceptPlan[], channel: string, audit: boolean): unknown[] => {
  const column = <V>(pick: (p: AcceptPlan) => V) => batch.map(pick);
  const deliveries = batch.flatMap((p, n) =>
    p.deliveries.map(({ id, target }) => ({ id, target, n })),
  );
  return [
    column((p) => p.eventId),
    column((p) => p.source),
    column((p) => p.dedupKey),
    column((p) => p.type),
    column((p) => p.occurredAt),
    column((p) => p.orderingKey),
    column((p) => p.version),
    column((p) => p.status),
    column((p) => p.receivedAt),
    byteaArrayParam(batch.map((p) => asBuffer(p.body))),
    column((p) => p.headersJson),
    column((p) => p.secretIndex),
    column((p) => p.receiptId),
    column((p) => p.remoteAddress),
    column((p) => p.body.byteLength),
    batch.map((_, n) => n),
    deliveries.map((d) => d.id),
    deliveries.map((d) => d.target),
    deliveries.map((d) => d.n),
    channel,
    ...(audit ? auditValues(batch) : []),
    // Last ($21 and $22, or $25 and $26 after the audit's four), so the numbers before stay.
    column((p) => p.traceparent),
    column((p) => p.orderVersion),
  ];
};

/** The prefix (0x00, version byte) and rest after the seq of a duplicate's receipt leaf. */
const receiptLeafValues = (p: AcceptPlan): [prefix: Buffer, rest: Buffer] =>
  receiptLeafParts({
    receiptId: p.receiptId,
    source: p.source,
    dedupKey: p.dedupKey,
    receivedAt: p.receivedAt,
    remoteAddress: p.remoteAddress,
    secretIndex: p.secretIndex,
    size: p.body.byteLength,
  });

// $21-$24: what audit_pending stores: per accept its event leaf's rest ($22) and its
// receipt leaf's rest ($24, used when it is a duplicate), as binary like the bodies, and the two
// prefixes ($21, $23). The event leaf commits to the plan's digests, made by core.
const auditValues = (batch: readonly AcceptPlan[]): unknown[] => {
  const [prefix, rests] = auditLeafValues(batch);
  const receipts = batch.map(receiptLeafValues);
  return [
    prefix,
    byteaArrayParam(rests),
    receipts[0]?.[0] ?? receiptLeafParts(null)[0],
    byteaArrayParam(receipts.map((r) => r[1])),
  ];
};

type Row = { n: number; id: string; duplicate: boolean };

/**
 * Runs a batch of accept plans and commits before it resolves: one statement, alone in its
 * transaction, for all of it (with `audit` on, the new events' leaves queued in audit_pending in
 * input order by that same statement, for the sequencer to append); then, for a new event whose
 * key a concurrent accept committed after that statement began, a duplicate receipt in a
 * statement of its own. Without such a race it is one round trip and one commit, audit on or
 * off. The batch must not hold one (source, dedup key) twice. Answers one outcome per plan, in
 * order.
 *
 * @example
 * ```ts
 * const [outcome] = await runAcceptBatch(pool, schemaNames("hookinbox"), "hookinbox_deliveries", [acceptPlanOf(input, true)], true);
 * ```
 */
export async function runAcceptBatch(
  pool: pg.Pool,
  t: SchemaNames,
  channel: string,
  batch: readonly AcceptPlan[],
  audit: boolean,
): Promise<AcceptOutcome[]> {
  const statement = {
    name: audit ? "hookinbox_accept_batch_audit" : "hookinbox_accept_batch",
    text: acceptBatchSql(t, audit),
    values: batchValues(batch, channel, audit),
  };
  const ids = batch.flatMap((p) => [p.eventId, p.receiptId]);
  const accept = async () => {
    const rows = new Map((await pool.query<Row>(statement)).rows.map((r) => [r.n, r]));
    const results: AcceptOutcome[] = [];
    for (const [n, p] of batch.entries()) {
      const row = rows.get(n);
      if (row) {
        results.push({ eventId: row.id, duplicate: row.duplicate });
        continue;
      }
      const raced = await pool.query<{ event_id: string }>({
        name: audit ? "hookinbox_accept_raced_audit" : "hookinbox_accept_raced",
        text: duplicateReceiptSql(t, audit),
        values: [
          p.receiptId,
          p.source,
          p.dedupKey,
          p.receivedAt,
          p.remoteAddress,
          p.body.byteLength,
          p.secretIndex,
          ...(audit ? receiptLeafValues(p) : []),
        ],
      });
      const eventId = raced.rows[0]?.event_id;
      if (!eventId) throw new Error("accept: conflicting event row not found");
      results.push({ eventId, duplicate: true });
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

const sameKey = (a: AcceptPlan, b: AcceptPlan) =>
  a.source === b.source && a.dedupKey === b.dedupKey;

/**
 * PostgreSQL's `insertOrGetEvent` (core/accept-driver.ts): concurrent accept plans are gathered
 * (the plans of one event-loop turn, and those arriving while 4 batches, 2 with the audit log
 * on, are in flight) into batches of up to 64, each run by `runAcceptBatch` and answered only
 * after its commit. A second plan of a key already in the batch waits for the next one (where it
 * is a duplicate, exactly as if it came later). When a batch fails, each of its plans is tried
 * alone, so one bad accept fails alone. A plan's ids were made when its accept was called, so one
 * that waited behind batches in flight keeps the time prefix (and so the day partition) of its
 * own receive time.
 *
 * @example
 * ```ts
 * const insertOrGetEvent = prepareInsertOrGetEvent(pool, schemaNames("hookinbox"), "hookinbox_deliveries", true);
 * const { eventId, duplicate } = await insertOrGetEvent(acceptPlanOf(input, true));
 * ```
 */
export function prepareInsertOrGetEvent(
  pool: pg.Pool,
  t: SchemaNames,
  channel: string,
  audit: boolean,
): (plan: AcceptPlan) => Promise<AcceptOutcome> {
  const one = async (plan: AcceptPlan): Promise<AcceptOutcome> =>
    (await runAcceptBatch(pool, t, channel, [plan], audit))[0] as AcceptOutcome;
  return gatherBatches<AcceptPlan, AcceptOutcome>(
    batchOrEachAlone(async (plans) => {
      const results = await runAcceptBatch(pool, t, channel, plans, audit);
      return results.map((value) => ({ ok: true, value }));
    }, one),
    { maxBatch, maxInFlight: audit ? maxInFlightAudited : maxInFlight },
    (plan, batch) =>
      !batch.some((other) => sameKey(plan, other)) &&
      batch.reduce((bytes, other) => bytes + other.body.byteLength, plan.body.byteLength) <=
        Math.max(maxBatchBytes, plan.body.byteLength),
  );
}

/**
 * PostgreSQL's `insertRows` (core/accept-driver.ts): statements core wrote that insert rows with
 * these ids, in one transaction, run again after making the ids' day partitions when one is
 * missing (withPartition, which also retries; the statements are run bare inside it, so it sees
 * PostgreSQL's own error).
 *
 * @example
 * ```ts
 * await insertRowsPostgres(pool, schemaNames("hookinbox"), ["rcp_…"], [{ text: "INSERT …", params: [] }]);
 * ```
 */
export function insertRowsPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  ids: readonly string[],
  statements: readonly SqlStatement[],
): Promise<SqlResult<unknown>[]> {
  const run = async (client: pg.Pool | pg.PoolClient) => {
    const results: SqlResult<unknown>[] = [];
    for (const { text, params } of statements) {
      const result = await client.query(text, params);
      results.push({ rows: result.rows as unknown[], rowCount: result.rowCount ?? 0 });
    }
    return results;
  };
  return withPartition(pool, t, ids, () =>
    statements.length === 1 ? run(pool) : withTransaction(pool, run),
  );
}
