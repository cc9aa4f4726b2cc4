import type { RetentionLeafFields, RetentionRecordKind } from "../../audit/retention-leaf.ts";
import { ulid, ulidTimePrefix } from "../../ids.ts";
import { UNFINISHED_DELIVERY_STATUSES } from "../purge-types.ts";
import type {
  RetentionStepInput,
  RetentionStepResult,
  RetentionStore,
} from "../retention-types.ts";
import { type CoreTable, type ReadDriver, rowsOf } from "./read-driver.ts";
import { nextCursor, SCAN_FACTOR, type ScanWindow } from "./scan-window.ts";
import { inList, listValue } from "./sql-template.ts";
import { executeText, type WriteDriver } from "./write-driver.ts";
import { type ProgramContext, steps, type WriteProgram } from "./write-program.ts";

/**
 * A retention leaf core decided on: `unique` makes its id (`ret_<unique>/…`, see
 * audit/retention-record.ts), `fields` what it records. A driver appends it, in the transaction
 * that deleted, at the log's next seq.
 *
 * @example
 * ```ts
 * const leaf: RetentionLeaf = { unique: ulid(now), fields: { kind: "events", firstId, lastId, removed: 3, cut } };
 * ```
 */
export interface RetentionLeaf {
  readonly unique: string;
  readonly fields: Omit<RetentionLeafFields, "seq">;
}

/**
 * A PostgreSQL day partition: its name qualified for SQL, the lowest id it holds ("" for
 * MINVALUE) and the first id past it.
 *
 * @example
 * ```ts
 * const p: RetentionPartition = { table: '"hookinbox"."events_p20260101"', from: "evt_…", to: "evt_…" };
 * ```
 */
export interface RetentionPartition {
  readonly table: string;
  readonly from: string;
  readonly to: string;
}

/**
 * What one run of core's retention program does (plain data, so it crosses to SQLite's writer
 * thread): `rows`, one retention step's transaction (on PostgreSQL with the day partition core
 * picked, or null); `processing`, one bounded batch of the deliveries, attempts and effects of
 * a PostgreSQL day about to be dropped.
 *
 * @example
 * ```ts
 * const run: RetentionProgramInput = { step: "processing", from: "evt_…", to: "evt_…", limit: 1000 };
 * ```
 */
export type RetentionProgramInput =
  | {
      readonly step: "rows";
      readonly input: RetentionStepInput;
      readonly partition: RetentionPartition | null;
    }
  | {
      readonly step: "processing";
      readonly from: string;
      readonly to: string;
      readonly limit: number;
    };

/**
 * What core's retention program answers: the step's result and the leaves the driver appends in
 * the same transaction.
 *
 * @example
 * ```ts
 * const outcome: RetentionOutcome = { result: { removed: 0, cursor: null }, leaves: [] };
 * ```
 */
export interface RetentionOutcome {
  readonly result: RetentionStepResult;
  readonly leaves: readonly RetentionLeaf[];
}

/**
 * What a driver gives core for retention: its reads and writes, and `runRetentionProgram`,
 * which runs core's {@link retentionProgram} in one transaction (SQLite: inside its group
 * commit, on the writer thread too; PostgreSQL: between BEGIN and COMMIT, retried as a whole),
 * appends the leaves it answers in that same transaction, and answers its result.
 *
 * @example
 * ```ts
 * const driver: RetentionDriver = { ...reads, ...writes, runRetentionProgram: (p) => write("retentionProgram", p) };
 * ```
 */
export interface RetentionDriver extends ReadDriver, WriteDriver {
  runRetentionProgram(run: RetentionProgramInput): Promise<RetentionStepResult>;
}

const unfinished = UNFINISHED_DELIVERY_STATUSES;

/** The leaf recording a deletion of `ids` (sorted: one range), if the audit log is on. */
function leafOf(
  input: RetentionStepInput,
  kind: RetentionRecordKind,
  deleted: { n: number; first: string | null; last: string | null },
): RetentionLeaf[] {
  if (!input.audit || deleted.n === 0 || deleted.first === null || deleted.last === null) return [];
  const fields = {
    kind,
    firstId: deleted.first,
    lastId: deleted.last,
    removed: deleted.n,
    cut: Math.floor(input.before),
  };
  return [{ unique: ulid(input.now), fields }];
}

const leafOfIds = (input: RetentionStepInput, kind: RetentionRecordKind, ids: string[]) => {
  const sorted = [...ids].sort();
  return leafOf(input, kind, {
    n: ids.length,
    first: sorted[0] ?? null,
    last: sorted[sorted.length - 1] ?? null,
  });
};

/** SQL: the event `eventId` has no unfinished delivery (the statuses bound at the `?`). */
const finishedOnly = (ctx: ProgramContext, eventId: string) =>
  `NOT EXISTS (SELECT 1 FROM ${ctx.table("deliveries")} d WHERE d.event_id = ${eventId} AND ${inList(ctx.dialect, "d.status")})`;

/** The events_before mark raised to `cut`, before anything goes (the API's 410, verify). */
const raiseMark = (ctx: ProgramContext, cut: string): [string, unknown[]] => {
  const marks = ctx.table("retention_marks");
  const greater =
    ctx.dialect === "postgres"
      ? `greatest(${marks}.value, excluded.value)`
      : "max(value, excluded.value)";
  return [
    `INSERT INTO ${marks} (name, value) VALUES ('events_before', ?)
     ON CONFLICT (name) DO UPDATE SET value = ${greater}`,
    [cut],
  ];
};

/**
 * Keeps, before accepted receipts go (`from` the rows, `where` which), the remote address and
 * secret index of each first receipt whose event stays, under the event's `first_receipt:` mark,
 * so verify can still recompute the event's leaf (docs/audit.md).
 */
const keepFirstReceipts = (
  ctx: ProgramContext,
  from: string,
  where: string,
  params: unknown[],
): [string, unknown[]] =>
  ctx.dialect === "postgres"
    ? [
        `INSERT INTO ${ctx.table("retention_marks")} (name, value)
         SELECT 'first_receipt:' || r.event_id,
                json_build_object('remoteAddress', r.remote_address, 'secretIndex', r.secret_index)::text
         FROM ${from} r JOIN ${ctx.table("events")} e ON e.id = r.event_id
         WHERE ${where} AND NOT r.duplicate AND r.id = 'rcp_' || substr(e.id, 5)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
        params,
      ]
    : [
        `INSERT OR REPLACE INTO retention_marks (name, value)
         SELECT 'first_receipt:' || r.event_id,
                json_object('remoteAddress', r.remote_address, 'secretIndex', r.secret_index)
         FROM ${from} r JOIN events e ON e.id = r.event_id
         WHERE ${where} AND r.duplicate = 0 AND r.id = 'rcp_' || substr(e.id, 5)`,
        params,
      ];

/** SQLite's retention step: one batch in one short group transaction (the writer held briefly). */
function* sqliteRows(ctx: ProgramContext, input: RetentionStepInput) {
  const before = Math.floor(input.before);
  const prefix = ulidTimePrefix(before);
  const leaves: RetentionLeaf[] = [];
  const done = (removed: number, cursor: string | null): RetentionOutcome => ({
    result: { removed, cursor },
    leaves,
  });
  if (input.kind === "dedup") return done(0, null);
  if (input.kind === "events") {
    const cut = `evt_${prefix}`;
    if (!input.dryRun) yield* steps(ctx, [raiseMark(ctx, cut)]);
    // Events with unfinished deliveries are skipped: the walk is bounded (scan-window.ts).
    const bound = input.limit * SCAN_FACTOR;
    const [scan] = yield* steps(ctx, [
      [
        `SELECT max(id) AS end, count(*) AS n
         FROM (SELECT id FROM events WHERE id > ? AND id < ? ORDER BY id LIMIT ?)`,
        [input.cursor, cut, bound],
      ],
    ]);
    const edge = scan?.rows[0] as { end: string | null; n: number } | undefined;
    const window: ScanWindow = { end: edge?.end ?? null, full: (edge?.n ?? 0) >= bound };
    if (window.end === null) return done(0, null);
    const [picked] = yield* steps(ctx, [
      [
        `SELECT e.id FROM events e
         WHERE e.id > ? AND e.id <= ? AND e.received_at < ? AND ${finishedOnly(ctx, "e.id")}
         ORDER BY e.id LIMIT ?`,
        [input.cursor, window.end, before, listValue(ctx.dialect, unfinished), input.limit],
      ],
    ]);
    const ids = ((picked?.rows ?? []) as { id: string }[]).map((r) => r.id);
    if (!input.dryRun && ids.length > 0) {
      const found = yield* steps(
        ctx,
        ids.map((id) => ["SELECT id FROM receipts WHERE event_id = ? ORDER BY id", [id]]),
      );
      const receipts = found.flatMap((r) => (r.rows as { id: string }[]).map((row) => row.id));
      yield* steps(
        ctx,
        ids.flatMap((id) => [
          [
            "DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id = ?)",
            [id],
          ],
          ["DELETE FROM deliveries WHERE event_id = ?", [id]],
          ["DELETE FROM effects WHERE event_id = ?", [id]],
          ["DELETE FROM receipts WHERE event_id = ?", [id]],
          ["DELETE FROM events WHERE id = ?", [id]],
          ["DELETE FROM retention_marks WHERE name = 'first_receipt:' || ?", [id]],
        ]),
      );
      leaves.push(...leafOfIds(input, "events", ids), ...leafOfIds(input, "receipts", receipts));
    }
    return done(
      ids.length,
      nextCursor((picked?.rows ?? []) as { id: string }[], input.limit, window),
    );
  }
  // Receipts are all taken but those another kind takes: no window (nothing to skip).
  const accepted = input.kind === "receipts";
  const [picked] = yield* steps(ctx, [
    [
      accepted
        ? `SELECT id FROM receipts WHERE id > ? AND id < ? AND received_at < ? AND event_id IS NOT NULL
           ORDER BY id LIMIT ?`
        : `SELECT id FROM receipts INDEXED BY receipts_rejected
           WHERE id > ? AND id < ? AND received_at < ? AND event_id IS NULL ORDER BY id LIMIT ?`,
      [input.cursor, `rcp_${prefix}`, before, input.limit],
    ],
  ]);
  const rows = (picked?.rows ?? []) as { id: string }[];
  if (!input.dryRun && rows.length > 0) {
    yield* steps(
      ctx,
      rows.flatMap(({ id }) => [
        ...(accepted && input.audit ? [keepFirstReceipts(ctx, "receipts", "r.id = ?", [id])] : []),
        ["DELETE FROM receipts WHERE id = ?", [id]] as [string, unknown[]],
      ]),
    );
    if (accepted)
      leaves.push(
        ...leafOfIds(
          input,
          "receipts",
          rows.map((r) => r.id),
        ),
      );
  }
  return done(rows.length, nextCursor(rows, input.limit, { end: null, full: false }));
}

/** Where each kind lives on PostgreSQL: its partitioned parent, id prefix, whether work pins rows. */
const kinds = {
  events: { parent: "events", prefix: "evt_", events: true },
  receipts: { parent: "receipts_accepted", prefix: "rcp_", events: false },
  rejected: { parent: "receipts_rejected", prefix: "rcp_", events: false },
} as const satisfies Record<string, { parent: CoreTable; prefix: string; events: boolean }>;

/** Deletes the deliveries (with attempts) and effects of the events `where` picks. */
const deleteProcessing = (
  ctx: ProgramContext,
  where: string,
  params: unknown[],
): Array<[string, unknown[]]> => [
  [
    `DELETE FROM ${ctx.table("attempts")} WHERE delivery_id IN (SELECT id FROM ${ctx.table("deliveries")} WHERE ${where})`,
    params,
  ],
  [`DELETE FROM ${ctx.table("deliveries")} WHERE ${where}`, params],
  [`DELETE FROM ${ctx.table("effects")} WHERE ${where}`, params],
];

/** Whether an unfinished delivery pins the events with ids in [from, to). */
const pinnedSql = (ctx: ProgramContext, range: RetentionPartition): [string, unknown[]] => [
  `SELECT 1 FROM ${ctx.table("deliveries")} WHERE event_id >= ? AND event_id < ? AND ${inList(ctx.dialect, "status")} LIMIT 1`,
  [range.from, range.to, listValue(ctx.dialect, unfinished)],
];

/**
 * PostgreSQL's retention step in one transaction: the day partition core picked is detached
 * and dropped (events: unless one of its events has unfinished work), else one batch of rows
 * received before `before` is deleted, up to the next whole day or the cut.
 */
function* postgresRows(
  ctx: ProgramContext,
  input: RetentionStepInput,
  partition: RetentionPartition | null,
) {
  if (input.kind === "dedup") throw new Error("dedup is no retention program");
  const kind = kinds[input.kind];
  const cut = `${kind.prefix}${ulidTimePrefix(input.before)}`;
  const parent = ctx.table(kind.parent);
  // Raised before anything goes, so verify never sees a missing row without its reason.
  if (kind.events && !input.dryRun) yield* steps(ctx, [raiseMark(ctx, cut)]);
  let pinned = false;
  if (partition && kind.events) {
    const [found] = yield* steps(ctx, [pinnedSql(ctx, partition)]);
    pinned = (found?.rows.length ?? 0) > 0;
  }
  const recorded = input.kind === "rejected" ? null : input.kind;
  const audited = !input.dryRun && input.audit === true && recorded !== null;
  const marks = ctx.table("retention_marks");
  if (partition && !pinned) {
    const [counted] = yield* steps(ctx, [
      [`SELECT count(*)::int AS n, min(id) AS first, max(id) AS last FROM ${partition.table}`, []],
    ]);
    const deleted = counted?.rows[0] as
      | { n: number; first: string | null; last: string | null }
      | undefined;
    if (input.dryRun)
      return { result: { removed: deleted?.n ?? 0, cursor: partition.to }, leaves: [] };
    const statements: Array<[string, unknown[]]> = [];
    if (audited && recorded === "receipts")
      statements.push(keepFirstReceipts(ctx, partition.table, "true", []));
    if (audited && recorded === "events") {
      statements.push([
        `DELETE FROM ${marks}
         WHERE name COLLATE "C" >= 'first_receipt:' || ? AND name COLLATE "C" < 'first_receipt:' || ?`,
        [partition.from, partition.to],
      ]);
    }
    if (kind.events)
      statements.push(
        ...deleteProcessing(ctx, "event_id >= ? AND event_id < ?", [partition.from, partition.to]),
      );
    // Waits at most 5 s for the parent's lock.
    statements.push(
      ["SET LOCAL lock_timeout = '5s'", []],
      [`ALTER TABLE ${parent} DETACH PARTITION ${partition.table}`, []],
      [`DROP TABLE ${partition.table}`, []],
    );
    yield* steps(ctx, statements);
    return {
      result: { removed: deleted?.n ?? 0, cursor: partition.to },
      leaves: audited && recorded && deleted ? leafOf(input, recorded, deleted) : [],
    };
  }
  const upTo = partition ? partition.to : cut;
  const [picked] = yield* steps(ctx, [
    [
      `SELECT x.id FROM ${parent} x
       WHERE x.id > ? AND x.id < ? AND x.received_at < ? ${kind.events ? `AND ${finishedOnly(ctx, "x.id")}` : ""}
       ORDER BY x.id LIMIT ?`,
      [
        input.cursor,
        upTo,
        Math.floor(input.before),
        ...(kind.events ? [listValue(ctx.dialect, unfinished)] : []),
        input.limit,
      ],
    ],
  ]);
  const ids = ((picked?.rows ?? []) as { id: string }[]).map((r) => r.id);
  let leaves: RetentionLeaf[] = [];
  if (!input.dryRun && ids.length > 0) {
    const statements: Array<[string, unknown[]]> = [];
    if (audited && recorded === "receipts")
      statements.push(keepFirstReceipts(ctx, parent, "r.id = ANY(?::text[])", [ids]));
    if (audited && recorded === "events") {
      statements.push([
        `DELETE FROM ${marks} WHERE name = ANY(SELECT 'first_receipt:' || unnest(?::text[]))`,
        [ids],
      ]);
    }
    if (kind.events) statements.push(...deleteProcessing(ctx, "event_id = ANY(?::text[])", [ids]));
    statements.push([`DELETE FROM ${parent} WHERE id = ANY(?::text[])`, [ids]]);
    yield* steps(ctx, statements);
    if (audited && recorded) {
      leaves = leafOf(input, recorded, {
        n: ids.length,
        first: ids[0]!,
        last: ids[ids.length - 1]!,
      });
    }
  }
  const full = ids.length >= input.limit;
  return {
    result: {
      removed: ids.length,
      cursor: full ? ids[ids.length - 1]! : partition ? partition.to : null,
    },
    leaves,
  };
}

/**
 * One bounded batch of the processing rows of the PostgreSQL events with ids in [from, to): up
 * to `limit` finished deliveries (with their attempts) and up to `limit` effects of events with
 * no unfinished delivery (a replay made since the pin check keeps its delivery and its effects).
 * Answers how many it removed (0: none are left).
 */
function* processingBatch(ctx: ProgramContext, from: string, to: string, limit: number) {
  const deliveries = ctx.table("deliveries");
  const statuses = listValue(ctx.dialect, unfinished);
  const [picked] = yield* steps(ctx, [
    [
      `SELECT id FROM ${deliveries}
       WHERE event_id >= ? AND event_id < ? AND NOT (${inList(ctx.dialect, "status")}) ORDER BY id LIMIT ?`,
      [from, to, statuses, limit],
    ],
  ]);
  const ids = ((picked?.rows ?? []) as { id: string }[]).map((r) => r.id);
  if (ids.length > 0) {
    yield* steps(ctx, [
      [`DELETE FROM ${ctx.table("attempts")} WHERE delivery_id = ANY(?::text[])`, [ids]],
      [`DELETE FROM ${deliveries} WHERE id = ANY(?::text[])`, [ids]],
    ]);
  }
  const [effects] = yield* steps(ctx, [
    [
      `DELETE FROM ${ctx.table("effects")} WHERE id IN (
         SELECT x.id FROM ${ctx.table("effects")} x
         WHERE x.event_id >= ? AND x.event_id < ? AND ${finishedOnly(ctx, "x.event_id")}
         ORDER BY x.id LIMIT ?)`,
      [from, to, statuses, limit],
    ],
  ]);
  const removed = ids.length + (effects?.rowCount ?? 0);
  return { result: { removed, cursor: null }, leaves: [] } as RetentionOutcome;
}

/**
 * Core's retention program, run by a driver's `runRetentionProgram` in one transaction: the
 * statements of one retention step (or one processing batch of a day about to be dropped),
 * answering the step's result and the retention leaves recording what it deleted.
 *
 * @example
 * ```ts
 * const { result, leaves } = driveProgram(retentionProgram(ctx, { step: "rows", input, partition: null }), run);
 * ```
 */
export const retentionProgram: WriteProgram<RetentionProgramInput, RetentionOutcome> = function* (
  ctx,
  run,
) {
  if (run.step === "processing") return yield* processingBatch(ctx, run.from, run.to, run.limit);
  if (ctx.dialect === "sqlite") return yield* sqliteRows(ctx, run.input);
  return yield* postgresRows(ctx, run.input, run.partition);
};

const boundOf = /FROM \((?:'([^']*)'|MINVALUE)\) TO \('([^']*)'\)/;

/**
 * Retention once for both stores (see RetentionStore.retentionStep). SQLite: one batch of
 * finished events (within the next `limit × SCAN_FACTOR` ids), accepted or rejected receipts in
 * one group transaction; dedup keys live in the events rows there. PostgreSQL: the oldest whole
 * day partition below the cut is dropped (events: its deliveries, attempts and effects first, in
 * bounded batches of their own, unless unfinished work pins the day), else a batch of rows;
 * dedup keys in one statement. With `input.audit`, a step that deletes events or accepted
 * receipts appends a retention leaf recording them in its own transaction.
 *
 * @example
 * ```ts
 * const { retentionStep } = retentionWrites(driver);
 * await retentionStep({ kind: "events", before, cursor: "", limit: 500, now, dryRun: false, audit: true });
 * ```
 */
export function retentionWrites(driver: RetentionDriver): Pick<RetentionStore, "retentionStep"> {
  return {
    async retentionStep(input) {
      if (driver.dialect === "sqlite") {
        return driver.runRetentionProgram({ step: "rows", input, partition: null });
      }
      if (input.kind === "dedup") return expireDedup(driver, input);
      const kind = kinds[input.kind];
      const cut = `${kind.prefix}${ulidTimePrefix(input.before)}`;
      const [partition] = await expiredPartitions(driver, kind.parent, cut, input.cursor);
      if (partition && kind.events && !input.dryRun) {
        const ctx: ProgramContext = { dialect: driver.dialect, table: (n) => driver.table(n) };
        const [pin] = await rowsOf(driver, ...pinnedSql(ctx, partition));
        // The day's deliveries, attempts and effects (unpartitioned tables) go first in bounded
        // batches, each its own short transaction; the drop rechecks the pin in its own.
        if (!pin) {
          const batch = { step: "processing", ...partition, limit: input.limit } as const;
          while ((await driver.runRetentionProgram(batch)).removed > 0);
        }
      }
      return driver.runRetentionProgram({ step: "rows", input, partition: partition ?? null });
    },
  };
}

/** The day partitions under `parent` whose every id sorts below `cut`, after `cursor`, oldest first. */
async function expiredPartitions(
  driver: RetentionDriver,
  parent: CoreTable,
  cut: string,
  cursor: string,
): Promise<RetentionPartition[]> {
  const rows = await rowsOf<{ name: string; bound: string }>(
    driver,
    `SELECT format('%I.%I', n.nspname, c.relname) AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE i.inhparent = ?::regclass`,
    [driver.table(parent)],
  );
  return rows
    .flatMap((r) => {
      const m = boundOf.exec(r.bound);
      return m ? [{ table: r.name, from: m[1] ?? "", to: m[2] ?? "" }] : [];
    })
    .filter((p) => p.to <= cut && p.to > cursor)
    .sort((a, b) => (a.to < b.to ? -1 : 1));
}

/** PostgreSQL's dedup keys received before the cut: counted, or one batch deleted. */
async function expireDedup(
  driver: RetentionDriver,
  input: RetentionStepInput,
): Promise<RetentionStepResult> {
  const before = Math.floor(input.before);
  const dedup = driver.table("event_dedup");
  if (input.dryRun) {
    const [row] = await rowsOf<{ n: number }>(
      driver,
      `SELECT count(*)::int AS n FROM ${dedup} WHERE received_at < ?`,
      [before],
    );
    return { removed: row?.n ?? 0, cursor: null };
  }
  const [result] = await executeText(driver, [
    [
      `DELETE FROM ${dedup} WHERE (source, dedup_key) IN (
         SELECT source, dedup_key FROM ${dedup} WHERE received_at < ? ORDER BY received_at LIMIT ?)`,
      [before, input.limit],
    ],
  ]);
  const removed = result?.rowCount ?? 0;
  return { removed, cursor: removed < input.limit ? null : "" };
}
