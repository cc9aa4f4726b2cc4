import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { firstReceiptLeafHashOf } from "../../src/audit/first-receipt-leaf.ts";
import { leafFieldsOf } from "../../src/audit/leaf.ts";
import { currentTree, rootAt, verifyLog } from "../../src/audit/log.ts";
import { runRetention } from "../../src/audit/retention.ts";
import { firstReceiptIdOf, firstReceiptMarkName } from "../../src/audit/retention-record.ts";
import { signTreeHead } from "../../src/audit/tree-head.ts";
import type { Store } from "../../src/store/types.ts";
import { storeFactories } from "../helpers/stores.ts";
import { acceptInput } from "../store/conformance.ts";
import { openedStore } from "./opened-store.ts";

// A new event's leaf (version 2, kind 1) covers its first receipt's own row: its id, remote
// address and secret index. Each test breaks exactly one row and expects one finding.

const day = 86_400_000;
const now = Date.UTC(2026, 2, 1, 12);

/** Three events from 198.51.100.0-2 under secret 1; the head of the three. */
async function threeEvents(store: Store) {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const input = acceptInput({
      receivedAt: now - 400 * day + i,
      remoteAddress: `198.51.100.${i}`,
      secretIndex: 1,
      identity: { dedupKey: `evt_${i}` },
    });
    const result = await store.accept(input);
    ids.push(result.eventId);
    // The receipt shares its event's ULID, and the leaf commits to its row.
    expect(result.receiptId).toBe(firstReceiptIdOf(result.eventId));
  }
  return { ids, head: { size: 3, root: await rootAt(store, 3) } };
}

const stores = storeFactories().filter((f) => f.name !== "pgbouncer");

describe.each(stores)("the first receipt is in its event's leaf ($name)", ({ open }) => {
  it("the leaf is version 2 kind 1 of the event and its first receipt; untouched, it verifies", async () => {
    const { store } = await openedStore(open);
    const { ids, head } = await threeEvents(store);
    const input = acceptInput({ receivedAt: now - 400 * day + 1, identity: { dedupKey: "evt_1" } });
    const [leaf] = await store.auditLeafPage(0, 1);
    expect(leaf!.hash).toEqual(
      firstReceiptLeafHashOf({
        ...leafFieldsOf(1, { ...input, dedupKey: "evt_1" }),
        receiptId: firstReceiptIdOf(ids[1]!),
        remoteAddress: "198.51.100.1",
        secretIndex: 1,
      }),
    );
    expect(await verifyLog(store, head)).toMatchObject({ ok: true, leaves: 3, defect: null });
  });

  const breaks: Array<[what: string, sql: string, reason: string]> = [
    [
      "remote address edited",
      "UPDATE receipts SET remote_address = '192.0.2.1' WHERE id = ?",
      "the event or its first receipt as stored does not match its leaf",
    ],
    [
      "remote address removed",
      "UPDATE receipts SET remote_address = NULL WHERE id = ?",
      "the event or its first receipt as stored does not match its leaf",
    ],
    [
      "secret index edited",
      "UPDATE receipts SET secret_index = 0 WHERE id = ?",
      "the first receipt as stored does not match its leaf",
    ],
    [
      // Another id in the same day (PostgreSQL keeps receipts in day partitions of ids), changed
      // mid-random: ids made in one millisecond differ in their last characters.
      "id edited",
      "UPDATE receipts SET id = substr(id, 1, 19) || CASE WHEN substr(id, 20, 1) = 'Z' THEN 'Y' ELSE 'Z' END || substr(id, 21) WHERE id = ?",
      "the event as stored does not match its leaf, or its first receipt row is missing",
    ],
    [
      "deleted",
      "DELETE FROM receipts WHERE id = ?",
      "the event as stored does not match its leaf, or its first receipt row is missing",
    ],
  ];

  it.each(breaks)("a first receipt %s is named", async (_what, sql, reason) => {
    const { db, store } = await openedStore(open);
    const { ids, head } = await threeEvents(store);
    await db.rows(sql, [firstReceiptIdOf(ids[1]!)]);
    expect(await verifyLog(store, head)).toEqual({
      ok: false,
      leaves: 1,
      defect: { seq: 1, eventId: ids[1], reason },
      coverage: {
        notConfigured: new Map(),
        digestOnly: [],
        retention: { leaves: [], recordedIn: [], unrecorded: [] },
      },
    });
  });

  it("after retention.receipts the event is still checked, with what retention kept", async () => {
    const { db, store } = await openedStore(open);
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const { ids } = await threeEvents(store);
    await store.saveTreeHead(
      signTreeHead(privateKey, await currentTree(store), now - 400 * day + 60_000),
    );
    const head = await currentTree(store);
    const windows = {
      payloadsMs: null,
      eventsMs: null,
      receiptsMs: 365 * day,
      rejectedMs: 7 * day,
      dedupMs: 35 * day,
    };
    expect((await runRetention(store, windows, { now, dryRun: false })).receipts).toBe(3);
    expect(await db.count("SELECT count(*) AS n FROM events")).toBe(3);
    expect(await db.count("SELECT count(*) AS n FROM receipts")).toBe(0);
    const expiry = { trustedKey: publicKey, eventsMs: null, receiptsMs: 365 * day, now };
    const ok = await verifyLog(store, head, { expiry });
    expect(ok).toMatchObject({ ok: true, leaves: 4, defect: null });
    expect(ok.coverage.retention).toEqual({
      leaves: [{ start: 0, end: 3 }],
      recordedIn: [3],
      unrecorded: [],
    });

    // The event's own fields are still rechecked against its leaf.
    await db.rows("UPDATE events SET received_at = received_at + 1 WHERE id = ?", [ids[2]]);
    expect((await verifyLog(store, head, { expiry })).defect).toMatchObject({
      seq: 2,
      reason: "the event or its first receipt as stored does not match its leaf",
    });
    await db.rows("UPDATE events SET received_at = received_at - 1 WHERE id = ?", [ids[2]]);
    // What retention kept is checked too: an edited address does not match.
    await db.rows("UPDATE retention_marks SET value = ? WHERE name = ?", [
      JSON.stringify({ remoteAddress: "192.0.2.1", secretIndex: 1 }),
      firstReceiptMarkName(ids[0]!),
    ]);
    expect((await verifyLog(store, head, { expiry })).defect).toMatchObject({ seq: 0 });
    // Without a signed head old enough, the deleted receipt is not excused.
    expect(
      (await verifyLog(store, head, { expiry: { ...expiry, now: now - 100 * day } })).defect,
    ).toEqual({ seq: 0, eventId: ids[0], reason: "the leaf's first receipt row is missing" });
  });
});
