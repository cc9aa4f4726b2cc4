import { createPublicKey } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAuditKey } from "../../src/audit/audit-key.ts";
import { appendToRange, EMPTY_RANGE, encodeRange } from "../../src/audit/compact-range.ts";
import { leafFieldsOf, leafHashOf } from "../../src/audit/leaf.ts";
import { currentTree, rootAt, verifyLog } from "../../src/audit/log.ts";
import { runRetention } from "../../src/audit/retention.ts";
import { retentionLeafHashOf } from "../../src/audit/retention-leaf.ts";
import { parseRetentionLeafId, retentionLeafId } from "../../src/audit/retention-record.ts";
import { signTreeHead } from "../../src/audit/tree-head.ts";
import type { Store } from "../../src/store/types.ts";
import { runCli } from "../helpers/cli-capture.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";
import { acceptInput } from "../store/conformance.ts";
import { openedStore } from "./opened-store.ts";

// Retention appends a leaf recording each deletion (a batch, or a dropped PostgreSQL day), and
// verify excuses a missing row only when such a leaf covers its id AND a head signed with the
// trusted key at least the window ago covers its leaf. Below the era boundary (the first leaf
// verify recomputes as a version-2 event leaf or a retention leaf), as in a log from before
// records, the anchor alone excuses it.

const day = 86_400_000;
const now = Date.UTC(2026, 2, 1, 12);
const seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const key = parseAuditKey(seed, "test");
const windows = {
  payloadsMs: null,
  eventsMs: 365 * day,
  receiptsMs: 365 * day,
  rejectedMs: 7 * day,
  dedupMs: 35 * day,
};
const expiry = {
  trustedKey: createPublicKey(key),
  eventsMs: windows.eventsMs,
  receiptsMs: windows.receiptsMs,
  now,
};

/**
 * Leaves 0-2: events a, b, c (day -400); 3: a duplicate of a (day -399); 4: p, pending work
 * (day -398, it stays); a head signed a minute later; 5-6: f, g (yesterday).
 */
async function agedLog(store: Store) {
  const accept = async (key: string, at: number, targets?: string[]) =>
    store.accept(
      acceptInput({ identity: { dedupKey: key }, receivedAt: at, ...(targets ? { targets } : {}) }),
    );
  const ids: Record<string, string> = {};
  for (const [k, at] of [
    ["a", now - 400 * day],
    ["b", now - 400 * day + 1],
    ["c", now - 400 * day + 2],
  ] as const)
    ids[k] = (await accept(k, at)).eventId;
  const dup = await accept("a", now - 399 * day);
  expect(dup.duplicate).toBe(true);
  ids.p = (await accept("p", now - 398 * day, ["t"])).eventId;
  await store.saveTreeHead(signTreeHead(key, await currentTree(store), now - 398 * day + 60_000));
  ids.f = (await accept("f", now - day)).eventId;
  ids.g = (await accept("g", now - day + 1)).eventId;
  return { ids, receipt: dup.receiptId, head: await currentTree(store) };
}

/** The retention leaves as stored: [seq, fields]. */
async function retentionLeaves(db: TestStore) {
  const rows = await db.rows<{ seq: number | string; event_id: string }>(
    "SELECT seq, event_id FROM audit_leaves WHERE event_id LIKE 'ret%' ORDER BY seq",
  );
  return rows.map((r) => [Number(r.seq), parseRetentionLeafId(r.event_id)] as const);
}

/** How many event partitions of day -400 (2025-01-25) there are (PostgreSQL). */
const dayPartitions = (db: TestStore) =>
  db.count(
    "SELECT count(*) AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass AND c.relname = 'events_p20250125'",
  );

/** Deletes an event row and everything that points at it, as a database editor would. */
async function deleteEventRow(db: TestStore, id: string) {
  await db.rows(
    "DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id = ?)",
    [id],
  );
  for (const table of ["deliveries", "effects", "receipts"])
    await db.rows(`DELETE FROM ${table} WHERE event_id = ?`, [id]);
  await db.rows("DELETE FROM events WHERE id = ?", [id]);
}

/**
 * Rewrites the leaves at `seqs` (events with their rows) as an older version wrote them (version
 * 1: no first receipt), and the tree's nodes and frontier to match, as a log from before
 * version-2 leaves has them.
 */
async function asVersion1(db: TestStore, store: Store, seqs: readonly number[]) {
  let range = EMPTY_RANGE;
  await db.rows("DELETE FROM audit_nodes");
  for (const record of await store.auditLeafPage(-1, 1000)) {
    let { hash } = record;
    if (seqs.includes(record.seq)) {
      hash = leafHashOf(leafFieldsOf(record.seq, record.event!));
      await db.rows("UPDATE audit_leaves SET hash = ? WHERE seq = ?", [hash, record.seq]);
    }
    const appended = appendToRange(range, hash);
    for (const node of appended.closed)
      await db.rows("INSERT INTO audit_nodes (level, idx, hash) VALUES (?, ?, ?)", [
        node.level,
        node.index,
        node.hash,
      ]);
    range = appended.range;
  }
  await db.rows("UPDATE audit_tree SET size = ?, frontier = ? WHERE id = 1", [
    range.size,
    encodeRange(range),
  ]);
}

/**
 * A log from before retention was recorded, upgraded 450 days ago. Old era: leaves 0-2, events
 * o0-o2 (day -500); 3: a duplicate of o0 (day -499, a version-2 receipt leaf: those came first);
 * a head of 4 signed a minute later; 4: m (day -480). Events o0-o2 and their receipts (the
 * duplicate's too) were deleted by retention.events before the upgrade, with no record. Version-1
 * leaves and no receipt with their event's ULID, as before. New era: 5-6: n0, n1 (day -450); a
 * head of 7 signed a minute later; 7: n2 (yesterday).
 */
async function upgradedLog(db: TestStore, store: Store) {
  const accept = async (key: string, at: number) =>
    store.accept(acceptInput({ identity: { dedupKey: key }, receivedAt: at }));
  const ids: Record<string, string> = {};
  for (const [k, at] of [
    ["o0", now - 500 * day],
    ["o1", now - 500 * day + 1],
    ["o2", now - 500 * day + 2],
  ] as const)
    ids[k] = (await accept(k, at)).eventId;
  expect((await accept("o0", now - 499 * day)).duplicate).toBe(true);
  ids.m = (await accept("m", now - 480 * day)).eventId;
  await asVersion1(db, store, [0, 1, 2, 4]);
  // An event accepted then had no receipt with its ULID: verify recomputes version 1.
  await db.rows("DELETE FROM receipts WHERE event_id = ?", [ids.m]);
  const oldHead = { size: 4, root: await rootAt(store, 4) };
  await store.saveTreeHead(signTreeHead(key, oldHead, now - 499 * day + 60_000));
  for (const k of ["o0", "o1", "o2"]) await deleteEventRow(db, ids[k]!);
  ids.n0 = (await accept("n0", now - 450 * day)).eventId;
  ids.n1 = (await accept("n1", now - 450 * day + 1)).eventId;
  await store.saveTreeHead(signTreeHead(key, await currentTree(store), now - 450 * day + 60_000));
  ids.n2 = (await accept("n2", now - day)).eventId;
  return { ids, head: await currentTree(store) };
}

/** `hookinbox audit verify` on the test database, with both windows at 365 days. */
async function cliVerify(db: TestStore) {
  const config = join(db.dir, "hookinbox.config.json");
  writeFileSync(
    config,
    JSON.stringify({ store: db.url, retention: { events: "365d", receipts: "365d" } }),
  );
  return runCli(["audit", "verify", "--config", config], { HOOKINBOX_AUDIT_KEY: seed });
}

/** The defect verify names for a leaf whose event row is gone with nothing to excuse it. */
const eventRowMissing = (seq: number, eventId: string | undefined) => ({
  seq,
  eventId,
  reason: "the leaf's event row is missing",
});

const stores = storeFactories().filter((f) => f.name !== "pgbouncer");

describe.each(stores)("retention records in the log ($name)", ({ open }) => {
  it("records each deletion; verify passes and says which leaves retention deleted", async () => {
    const { db, store } = await openedStore(open);
    const { ids, head } = await agedLog(store);
    if (db.kind === "postgres") expect(await dayPartitions(db)).toBe(1);
    const counts = await runRetention(store, windows, { now, dryRun: false });
    expect(counts).toMatchObject({ events: 3, receipts: 5 });
    const cut = now - 365 * day;
    const leaves = await retentionLeaves(db);
    if (db.kind === "sqlite") {
      // One batch of receipts (the first receipts of a, b, c, p and the duplicate), one of events.
      expect(leaves).toEqual([
        [7, expect.objectContaining({ kind: "receipts", removed: 5, cut })],
        [8, { kind: "events", firstId: ids.a, lastId: ids.c, removed: 3, cut }],
      ]);
    } else {
      // Three dropped days of receipts (-400, -399, -398), one dropped day of events (-400);
      // day -398 of events is pinned by p's pending delivery and nothing in it goes.
      expect(leaves).toEqual([
        [7, expect.objectContaining({ kind: "receipts", removed: 3, cut })],
        [8, expect.objectContaining({ kind: "receipts", removed: 1, cut })],
        [9, expect.objectContaining({ kind: "receipts", removed: 1, cut })],
        [10, { kind: "events", firstId: ids.a, lastId: ids.c, removed: 3, cut }],
      ]);
      // Day -400 of events went by DETACH and DROP (the partition path).
      expect(await dayPartitions(db)).toBe(0);
    }
    const recorded = db.kind === "sqlite" ? 2 : 4;
    // On PostgreSQL, leaf 7 (the first receipts of a, b, c) excuses nothing: their events' leaves
    // are excused whole by leaf 10.
    const records = db.kind === "sqlite" ? [7, 8] : [8, 9, 10];
    const result = await verifyLog(store, head, { expiry });
    expect(result).toEqual({
      ok: true,
      leaves: 7 + recorded,
      defect: null,
      coverage: {
        notConfigured: new Map(),
        digestOnly: [],
        // 0-2: events gone; 3: the duplicate's receipt gone; 4: p's first receipt gone.
        retention: { leaves: [{ start: 0, end: 5 }], recordedIn: records, unrecorded: [] },
      },
    });

    const cli = await cliVerify(db);
    // The CLI's clock is its own (later than `now`): the head of day -398 is old enough there too.
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(
      `deleted by retention (recorded in leaves ${records.join(", ")}): leaves 0-4\n`,
    );
  });

  it("a row deleted outside retention, old enough but in no record, is named above the era boundary", async () => {
    const { db, store } = await openedStore(open);
    const { ids, head } = await agedLog(store);
    // Receipts only: events a, b, c stay, and leaf 0 (a, a version-2 event leaf whose first
    // receipt retention deleted and recorded) proves the era boundary is 0.
    await runRetention(store, { ...windows, eventsMs: null }, { now, dryRun: false });
    // p (leaf 4) is below the anchor, but no retention leaf covers its id.
    await deleteEventRow(db, ids.p!);
    expect((await verifyLog(store, head, { expiry })).defect).toEqual(eventRowMissing(4, ids.p));
  });

  it("with every row before it gone, nothing proves a missing row's era: the anchor alone excuses it", async () => {
    const { db, store } = await openedStore(open);
    const { ids, head } = await agedLog(store);
    await runRetention(store, windows, { now, dryRun: false });
    // Leaves 0-3 lost their rows to retention (recorded), so the first leaf verify can recompute
    // as a version-2 event leaf is 5 (f): p (leaf 4), deleted by hand below the anchor, cannot be
    // told from a row deleted before retention was recorded (its leaf's bytes are gone with it).
    await deleteEventRow(db, ids.p!);
    const { ok, coverage } = await verifyLog(store, head, { expiry });
    expect(ok).toBe(true);
    expect(coverage.retention.unrecorded).toEqual([{ start: 4, end: 5 }]);
  });

  it("an edited retention record is named; a forged one covering a recent event excuses nothing", async () => {
    const { db, store } = await openedStore(open);
    const { ids, head } = await agedLog(store);
    await runRetention(store, windows, { now, dryRun: false });
    // A real record whose count is edited no longer matches its leaf.
    const recordSeq = (await retentionLeaves(db))[0]![0];
    const [row] = await db.rows<{ event_id: string }>(
      "SELECT event_id FROM audit_leaves WHERE seq = ?",
      [recordSeq],
    );
    await db.rows("UPDATE audit_leaves SET event_id = ? WHERE seq = ?", [
      row!.event_id.replace(/\/(\d+)\/(\d+)$/, "/9$1/$2"),
      recordSeq,
    ]);
    expect((await verifyLog(store, head, { expiry })).defect).toMatchObject({
      seq: recordSeq,
      reason: "the retention record as stored does not match its leaf",
    });
    await db.rows("UPDATE audit_leaves SET event_id = ? WHERE seq = ?", [row!.event_id, recordSeq]);
    expect((await verifyLog(store, head, { expiry })).ok).toBe(true);

    // A retention leaf appended by hand (hashed right) covering a recent event's deleted row.

    const [last] = await db.rows<{ seq: number | string }>(
      "SELECT max(seq) AS seq FROM audit_leaves",
    );
    const seq = Number(last!.seq) + 1;
    const fields = {
      kind: "events" as const,
      firstId: ids.f!,
      lastId: ids.g!,
      removed: 2,
      cut: now,
    };
    await db.rows("INSERT INTO audit_leaves (seq, event_id, hash) VALUES (?, ?, ?)", [
      seq,
      retentionLeafId("FORGED", fields),
      retentionLeafHashOf({ seq, ...fields }),
    ]);
    await deleteEventRow(db, ids.f!);
    expect((await verifyLog(store, head, { expiry })).defect).toEqual(eventRowMissing(5, ids.f));
  });

  it("an upgraded log: rows deleted before retention was recorded are excused below the era boundary by the anchor alone", async () => {
    const { db, store } = await openedStore(open);
    const { head } = await upgradedLog(db, store);
    // The era boundary is leaf 5 (n0, the first version-2 event leaf); the anchor, the head of 7.
    expect(await verifyLog(store, head, { expiry })).toEqual({
      ok: true,
      leaves: 8,
      defect: null,
      coverage: {
        notConfigured: new Map(),
        digestOnly: [],
        retention: { leaves: [], recordedIn: [], unrecorded: [{ start: 0, end: 4 }] },
      },
    });
    const cli = await cliVerify(db);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/^ok: 8 leaves match their events; the first 7 hash to root/);
    expect(cli.stdout).toContain(
      "deleted before retention was recorded in the log (anchor only): leaves 0-3\n",
    );
    expect(cli.stdout).not.toContain("deleted by retention (recorded");
  });

  it("an upgraded log: a row at or above the era boundary deleted with no record is named, below the anchor too", async () => {
    const { db, store } = await openedStore(open);
    const { ids, head } = await upgradedLog(db, store);
    // n1 (leaf 6) is below the anchor (the head of 7) and above the boundary (leaf 5).
    await deleteEventRow(db, ids.n1!);
    expect((await verifyLog(store, head, { expiry })).defect).toEqual(eventRowMissing(6, ids.n1));
  });

  it("an upgraded log: a row below the era boundary but not below the anchor is named", async () => {
    const { db, store } = await openedStore(open);
    const { ids, head } = await upgradedLog(db, store);
    await deleteEventRow(db, ids.m!);
    // A clock 100 days earlier: the anchor is the head of 4 (the head of 7 is too recent), and
    // m (leaf 4, version 1, below the boundary) is not below it.
    const earlier = { ...expiry, now: now - 100 * day };
    expect((await verifyLog(store, head, { expiry: earlier })).defect).toEqual(
      eventRowMissing(4, ids.m),
    );
    // With today's clock the head of 7 is the anchor: m, below the boundary, is excused by it.
    expect((await verifyLog(store, head, { expiry })).coverage.retention.unrecorded).toEqual([
      { start: 0, end: 5 },
    ]);
  });
});
