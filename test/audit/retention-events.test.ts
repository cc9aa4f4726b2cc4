import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { currentTree, proveInclusion, verifyLog } from "../../src/audit/log.ts";
import { verifyInclusion } from "../../src/audit/merkle.ts";
import { runRetention } from "../../src/audit/retention.ts";
import { signTreeHead } from "../../src/audit/tree-head.ts";
import { parsePostgresUrl } from "../../src/store/postgres/connection.ts";
import { dayPartitions } from "../../src/store/postgres/partitions.ts";
import { schemaNames } from "../../src/store/postgres/schema-names.ts";
import { storeFactories } from "../helpers/stores.ts";
import { acceptInput } from "../store/conformance.ts";
import { openedStore } from "./opened-store.ts";

// Whole-event, receipt, rejected-receipt and dedup-key retention on each store: finished events
// past retention.events go (on PostgreSQL a whole day goes by DROP), an event with pending work
// stays, proofs of expired and surviving events still verify, the API says an event expired, a
// row put back under an expired id is caught, and dedup holds inside retention.dedup only.

const day = 86_400_000;
const now = Date.UTC(2026, 2, 1, 12);
const windows = {
  payloadsMs: null,
  eventsMs: 36 * day,
  receiptsMs: 36 * day,
  rejectedMs: 7 * day,
  dedupMs: 35 * day,
};
const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const expiry = {
  trustedKey: publicKey,
  eventsMs: windows.eventsMs,
  receiptsMs: windows.receiptsMs,
  now,
};

describe.each(storeFactories())("event retention ($name)", ({ open }) => {
  it("removes finished old events, receipts, rejections and dedup keys; proofs still verify", async () => {
    const { db, store } = await openedStore(open);
    const accept = (key: string, at: number, targets?: string[]) =>
      store.accept(
        acceptInput({
          identity: { dedupKey: key },
          receivedAt: at,
          body: new TextEncoder().encode(`{"id":"${key}"}`),
          ...(targets ? { targets } : {}),
        }),
      );
    // Day -40: three events, one with a pending delivery (it must stay); day -39: two events;
    // day -38: a duplicate receipt of an old event; day -1: two events.
    const ids: string[] = [];
    for (const [key, at, targets] of [
      ["a", now - 40 * day, undefined],
      ["b", now - 40 * day + 1, ["t"]],
      ["c", now - 40 * day + 2, undefined],
      ["d", now - 39 * day, undefined],
      ["e", now - 39 * day + 1, undefined],
      ["f", now - day, undefined],
      ["g", now - day + 1, undefined],
    ] as const) {
      ids.push((await accept(key, at, targets ? [...targets] : undefined)).eventId);
      // The head signed every minute while the log grew: the last one 39 days ago, after "e".
      if (key === "e")
        await store.saveTreeHead(signTreeHead(privateKey, await currentTree(store), at + 60_000));
    }
    expect((await accept("a", now - 38 * day)).duplicate).toBe(true);
    // Its receipt leaf (leaf 7) is under a head signed a minute later, before retention.receipts.
    await store.saveTreeHead(
      signTreeHead(privateKey, await currentTree(store), now - 38 * day + 60_000),
    );
    for (const at of [now - 10 * day, now - day]) {
      await store.recordRejection({
        source: "stripe",
        receivedAt: at,
        remoteAddress: null,
        status: 401,
        code: "HOOKINBOX_SIGNATURE_MISMATCH",
        size: 2,
        headerNames: ["host"],
      });
    }
    const head = await currentTree(store);

    // Dedup keys live in their own table on PostgreSQL (5 older than 35 days), in the event
    // rows on SQLite (they go with the events).
    const dedup = db.kind === "postgres" ? 5 : 0;
    const expected = { payloads: 0, events: 4, receipts: 6, rejected: 1, dedup };
    const dry = await runRetention(store, windows, { now, dryRun: true, batchSize: 2 });
    expect(dry).toEqual(expected);
    expect(await db.count("SELECT count(*) AS n FROM events")).toBe(7);
    expect(await runRetention(store, windows, { now, dryRun: false, batchSize: 2 })).toEqual(
      expected,
    );
    expect(await runRetention(store, windows, { now, dryRun: false, batchSize: 2 })).toEqual({
      payloads: 0,
      events: 0,
      receipts: 0,
      rejected: 0,
      dedup: 0,
    });
    expect(
      (await db.rows<{ id: string }>("SELECT id FROM events ORDER BY id")).map((r) => r.id),
    ).toEqual([ids[1], ids[5], ids[6]]);
    expect(await db.count("SELECT count(*) AS n FROM receipts WHERE event_id IS NOT NULL")).toBe(2);
    expect(await db.count("SELECT count(*) AS n FROM receipts WHERE event_id IS NULL")).toBe(1);
    if (db.kind === "postgres") {
      // Day -39 went as a whole; day -40 stays for the event with pending work.
      const days = await db.rows<{ relname: string }>(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass AND c.relname IN ('events_p20260120', 'events_p20260121') ORDER BY 1",
      );
      expect(days.map((d) => d.relname)).toEqual(["events_p20260120"]);
      expect(await db.count("SELECT count(*) AS n FROM event_dedup")).toBe(2);
    }

    // Every leaf stays: the log verifies and every event, expired or not, is proved. Each batch
    // (SQLite: 3 of receipts, 2 of events) or day (PostgreSQL: 3 days of receipts, a day of
    // events and a batch of the pinned day) appended its retention leaf: 8 + 5 leaves.
    const verified = await verifyLog(store, head, { expiry });
    // Leaves 0, 2-4 lost their events, 7 its receipt, 1 (b, pinned) its first receipt.
    expect(verified.coverage.retention).toEqual({
      leaves: [
        { start: 0, end: 5 },
        { start: 7, end: 8 },
      ],
      recordedIn: [8, 10, 11, 12],
      unrecorded: [],
    });
    expect(verified).toEqual({
      ok: true,
      leaves: 13,
      defect: null,
      coverage: expect.any(Object),
    });
    for (const [seq, id] of ids.entries()) {
      const proof = (await proveInclusion(store, id, head.size))!;
      expect(verifyInclusion(seq, head.size, proof.leafHash, proof.proof, head.root)).toBe(true);
    }
    // The store says an expired event was removed by retention, not that it never existed.
    expect(await store.getEvent(ids[0]!)).toBeNull();
    expect(ids[0]! < (await store.eventsExpiredBefore())).toBe(true);
    expect(ids[5]! < (await store.eventsExpiredBefore())).toBe(false);

    // Dedup: a key inside the window is still a duplicate; an expired one is a new event.
    expect((await accept("f", now)).duplicate).toBe(true);
    const again = await accept("a", now);
    expect(again.duplicate).toBe(false);
    expect(again.eventId).not.toBe(ids[0]);

    // A row put back under an expired id (another body passed off as the purged one) is caught.
    const body = db.kind === "sqlite" ? "X'7b7d'" : "'\\x7b7d'::bytea";
    // On PostgreSQL its day was dropped: the tamperer has to make the partition again first.
    if (db.kind === "postgres")
      for (const { sql } of dayPartitions(
        schemaNames(parsePostgresUrl(db.url).schema),
        now - 39 * day,
      ))
        await db.exec(sql);
    await db.exec(
      `INSERT INTO events (id, source, dedup_key, status, received_at, body, headers)
       VALUES ('${ids[3]}', 'stripe', 'd', 'ignored', ${now - 39 * day}, ${body}, '[]')`,
    );
    expect((await verifyLog(store, head, { expiry })).defect).toEqual({
      seq: 3,
      eventId: ids[3],
      reason: "the event as stored does not match its leaf, or its first receipt row is missing",
    });
  });
});
