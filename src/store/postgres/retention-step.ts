import type pg from "pg";
import { ulidTimePrefix } from "../../ids.ts";
import { UNFINISHED_DELIVERY_STATUSES } from "../purge-types.ts";
import type { RetentionStepInput, RetentionStepResult } from "../retention-types.ts";
import { withRetry, withTransaction } from "./connection.ts";
import {
  type Deleted,
  dropFirstReceiptMarks,
  keepFirstReceipts,
  recordDeletion,
} from "./retention-record.ts";
import type { SchemaNames } from "./schema-names.ts";

interface Partition {
  name: string;
  /** Lowest id it holds ("" for MINVALUE) and the first id past it. */
  from: string;
  to: string;
}

const boundOf = /FROM \((?:'([^']*)'|MINVALUE)\) TO \('([^']*)'\)/;

/** The day partitions under `parent` whose every id sorts below `cut`, after `cursor`, oldest first. */
async function expiredPartitions(
  client: pg.PoolClient | pg.Pool,
  t: SchemaNames,
  parent: string,
  cut: string,
  cursor: string,
): Promise<Partition[]> {
  const { rows } = await client.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = $1::regclass`,
    [`${t.schema}.${parent}`],
  );
  return rows
    .flatMap((r) => {
      const m = boundOf.exec(r.bound);
      return m ? [{ name: r.name, from: m[1] ?? "", to: m[2] ?? "" }] : [];
    })
    .filter((p) => p.to <= cut && p.to > cursor)
    .sort((a, b) => (a.to < b.to ? -1 : 1));
}

const unfinished = [...UNFINISHED_DELIVERY_STATUSES];

/** SQL: the event whose id is `eventId` has no unfinished delivery (statuses in `param`). */
const finishedOnly = (t: SchemaNames, param: string, eventId = "x.id") =>
  `NOT EXISTS (SELECT 1 FROM ${t.deliveries} d WHERE d.event_id = ${eventId} AND d.status = ANY(${param}::text[]))`;

/** Detaches and drops one partition, waiting at most 5 s for its parent's lock. */
async function dropPartition(client: pg.PoolClient, t: SchemaNames, parent: string, name: string) {
  await client.query("SET LOCAL lock_timeout = '5s'");
  await client.query(`ALTER TABLE ${t.schema}.${parent} DETACH PARTITION ${t.schema}."${name}"`);
  await client.query(`DROP TABLE ${t.schema}."${name}"`);
}

/** Deletes the deliveries (with attempts) and effects of the events with ids in [from, to). */
async function deleteProcessing(
  client: pg.PoolClient,
  t: SchemaNames,
  ids: string[] | null,
  range: Partition | null,
) {
  const where = ids ? "event_id = ANY($1::text[])" : "event_id >= $1 AND event_id < $2";
  const values: unknown[] = ids ? [ids] : [range?.from ?? "", range?.to ?? ""];
  await client.query(
    `DELETE FROM ${t.attempts} WHERE delivery_id IN (SELECT id FROM ${t.deliveries} WHERE ${where})`,
    values,
  );
  await client.query(`DELETE FROM ${t.deliveries} WHERE ${where}`, values);
  await client.query(`DELETE FROM ${t.effects} WHERE ${where}`, values);
}

/**
 * One bounded batch of the processing rows of the events with ids in [from, to): up to `limit`
 * finished deliveries (with their attempts) and up to `limit` effects of events with no
 * unfinished delivery (a replay made since the pin check keeps its delivery and its effects), in
 * one short transaction of its own. Returns how many deliveries and effects it removed (0: none
 * are left). Run until 0 before a day partition is dropped, so the drop's own transaction only
 * sweeps up stragglers.
 *
 * @example
 * ```ts
 * while ((await deleteProcessingBatchPostgres(pool, t, "evt_01J…", "evt_01K…", 1000)) > 0);
 * ```
 */
export function deleteProcessingBatchPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  from: string,
  to: string,
  limit: number,
): Promise<number> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      `SELECT id FROM ${t.deliveries}
       WHERE event_id >= $1 AND event_id < $2 AND NOT (status = ANY($4::text[])) ORDER BY id LIMIT $3`,
      [from, to, limit, unfinished],
    );
    const ids = rows.map((r) => r.id);
    if (ids.length > 0) {
      await client.query(`DELETE FROM ${t.attempts} WHERE delivery_id = ANY($1::text[])`, [ids]);
      await client.query(`DELETE FROM ${t.deliveries} WHERE id = ANY($1::text[])`, [ids]);
    }
    const effects = await client.query(
      `DELETE FROM ${t.effects} WHERE id IN (
         SELECT x.id FROM ${t.effects} x
         WHERE x.event_id >= $1 AND x.event_id < $2 AND ${finishedOnly(t, "$4", "x.event_id")}
         ORDER BY x.id LIMIT $3)`,
      [from, to, limit, unfinished],
    );
    return ids.length + (effects.rowCount ?? 0);
  });
}

/** Whether an unfinished delivery pins the events with ids in [from, to). */
async function pinnedRange(client: pg.PoolClient | pg.Pool, t: SchemaNames, range: Partition) {
  const { rows } = await client.query(
    `SELECT 1 FROM ${t.deliveries} WHERE event_id >= $1 AND event_id < $2 AND status = ANY($3::text[]) LIMIT 1`,
    [range.from, range.to, unfinished],
  );
  return rows.length > 0;
}

/** Where each kind lives: its partitioned parent, id prefix, and whether unfinished work pins rows. */
const kinds = {
  events: { parent: "events", prefix: "evt_", events: true },
  receipts: { parent: "receipts_accepted", prefix: "rcp_", events: false },
  rejected: { parent: "receipts_rejected", prefix: "rcp_", events: false },
} as const;

/**
 * Events, receipts or rejected receipts: the oldest whole day below the cut is detached and
 * dropped (events: unless one of its events has unfinished work); otherwise one batch of rows
 * received before `before` is deleted, up to the next whole day or the cut (the day the cut
 * falls in, and a day pinned by unfinished work).
 */
async function expireRows(
  pool: pg.Pool,
  t: SchemaNames,
  input: RetentionStepInput & { kind: keyof typeof kinds },
): Promise<RetentionStepResult> {
  const kind = kinds[input.kind];
  const cut = `${kind.prefix}${ulidTimePrefix(input.before)}`;
  const [partition] = await expiredPartitions(pool, t, kind.parent, cut, input.cursor);
  if (partition && kind.events && !input.dryRun && !(await pinnedRange(pool, t, partition))) {
    // The day's deliveries, attempts and effects (unpartitioned tables) go first in bounded
    // batches, each its own short transaction; the drop below rechecks the pin in its own.
    while (
      (await deleteProcessingBatchPostgres(pool, t, partition.from, partition.to, input.limit)) > 0
    );
  }
  return withTransaction(pool, async (client) => {
    if (kind.events && !input.dryRun) {
      // Raised before anything goes, so verify never sees a missing row without its reason.
      await client.query(
        `INSERT INTO ${t.retention_marks} (name, value) VALUES ('events_before', $1)
         ON CONFLICT (name) DO UPDATE SET value = greatest(${t.retention_marks}.value, excluded.value)`,
        [cut],
      );
    }
    const pinned = partition && kind.events ? await pinnedRange(client, t, partition) : false;
    const recorded = input.kind === "rejected" ? null : input.kind;
    const audited = !input.dryRun && input.audit && recorded !== null;
    if (partition && !pinned) {
      const table = `${t.schema}."${partition.name}"`;
      const { rows } = await client.query<Deleted>(
        `SELECT count(*)::int AS n, min(id) AS first, max(id) AS last FROM ${table}`,
      );
      if (!input.dryRun) {
        if (audited && recorded === "receipts")
          await keepFirstReceipts(client, t, table, "true", []);
        if (audited && recorded === "events") {
          await dropFirstReceiptMarks(
            client,
            t,
            `name COLLATE "C" >= 'first_receipt:' || $1 AND name COLLATE "C" < 'first_receipt:' || $2`,
            [partition.from, partition.to],
          );
        }
        if (kind.events) await deleteProcessing(client, t, null, partition);
        await dropPartition(client, t, kind.parent, partition.name);
        if (audited && rows[0]) await recordDeletion(client, t, input, recorded, rows[0]);
      }
      return { removed: rows[0]?.n ?? 0, cursor: partition.to };
    }
    const upTo = partition ? partition.to : cut;
    const { rows } = await client.query<{ id: string }>(
      `SELECT x.id FROM ${t.schema}.${kind.parent} x
       WHERE x.id > $1 AND x.id < $2 AND x.received_at < $3 ${kind.events ? `AND ${finishedOnly(t, "$5")}` : ""}
       ORDER BY x.id LIMIT $4`,
      [
        input.cursor,
        upTo,
        Math.floor(input.before),
        input.limit,
        ...(kind.events ? [unfinished] : []),
      ],
    );
    const ids = rows.map((r) => r.id);
    if (!input.dryRun && ids.length > 0) {
      if (audited && recorded === "receipts") {
        await keepFirstReceipts(client, t, `${t.schema}.${kind.parent}`, "r.id = ANY($1::text[])", [
          ids,
        ]);
      }
      if (audited && recorded === "events") {
        await dropFirstReceiptMarks(
          client,
          t,
          "name = ANY(SELECT 'first_receipt:' || unnest($1::text[]))",
          [ids],
        );
      }
      if (kind.events) await deleteProcessing(client, t, ids, null);
      await client.query(`DELETE FROM ${t.schema}.${kind.parent} WHERE id = ANY($1::text[])`, [
        ids,
      ]);
      if (audited) {
        await recordDeletion(client, t, input, recorded, {
          n: ids.length,
          first: ids[0]!,
          last: ids[ids.length - 1]!,
        });
      }
    }
    const done = ids.length < input.limit;
    return {
      removed: ids.length,
      cursor: !done ? ids[ids.length - 1]! : partition ? partition.to : null,
    };
  });
}

async function expireDedup(
  pool: pg.Pool,
  t: SchemaNames,
  input: RetentionStepInput,
): Promise<RetentionStepResult> {
  const before = Math.floor(input.before);
  if (input.dryRun) {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${t.event_dedup} WHERE received_at < $1`,
      [before],
    );
    return { removed: rows[0]?.n ?? 0, cursor: null };
  }
  const result = await pool.query(
    `DELETE FROM ${t.event_dedup} WHERE (source, dedup_key) IN (
       SELECT source, dedup_key FROM ${t.event_dedup} WHERE received_at < $1 ORDER BY received_at LIMIT $2)`,
    [before, input.limit],
  );
  const removed = result.rowCount ?? 0;
  return { removed, cursor: removed < input.limit ? null : "" };
}

/**
 * One retention step on PostgreSQL (see RetentionStore.retentionStep): a day partition of
 * events or receipts detached and dropped (after the deliveries, attempts and effects of its
 * events), a batch of finished events of a day that still holds unfinished ones, or a batch of
 * dedup keys. Cursors are partition upper bounds or event ids, so a step never revisits a day.
 *
 * @example
 * ```ts
 * await retentionStepPostgres(pool, t, { kind: "receipts", before, cursor: "", limit: 1000, now, dryRun: true });
 * ```
 */
export function retentionStepPostgres(
  pool: pg.Pool,
  t: SchemaNames,
  input: RetentionStepInput,
): Promise<RetentionStepResult> {
  return withRetry(() => {
    if (input.kind === "dedup") return expireDedup(pool, t, input);
    return expireRows(pool, t, { ...input, kind: input.kind });
  });
}
