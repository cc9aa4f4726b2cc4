import { describe, expect, it } from "vitest";
import { rootAt, verifyLog } from "../../src/audit/log.ts";
import type { Store } from "../../src/store/types.ts";
import { storeFactories } from "../helpers/stores.ts";
import { acceptInput } from "../store/conformance.ts";
import { openedStore } from "./opened-store.ts";

// A duplicate's receipt (what arrived, when, from where, under which secret) is a leaf of its own:
// each test breaks exactly one receipt row and expects exactly one finding naming its leaf.

/** Three events, then two duplicates of the second: leaves 0-2 events, 3-4 receipts. */
async function withDuplicates(store: Store) {
  const at = Date.UTC(2026, 0, 2);
  for (let i = 0; i < 3; i++) {
    await store.accept(acceptInput({ receivedAt: at + i, identity: { dedupKey: `evt_${i}` } }));
  }
  const receipts: string[] = [];
  for (let k = 0; k < 2; k++) {
    const duplicate = await store.accept(
      acceptInput({
        receivedAt: at + 10 + k,
        remoteAddress: `198.51.100.${k}`,
        secretIndex: k,
        identity: { dedupKey: "evt_1" },
      }),
    );
    expect(duplicate.duplicate).toBe(true);
    receipts.push(duplicate.receiptId);
  }
  return { receipts, head: { size: 5, root: await rootAt(store, 5) } };
}

const stores = storeFactories().filter((f) => f.name !== "pgbouncer");

describe.each(stores)("duplicates' receipts are in the log ($name)", ({ open }) => {
  it("appends one receipt leaf per duplicate, and the log verifies", async () => {
    const { db, store } = await openedStore(open);
    const { receipts, head } = await withDuplicates(store);
    expect((await store.auditTree()).size).toBe(5);
    expect(
      await db.rows<{ seq: number; event_id: string }>(
        "SELECT seq, event_id FROM audit_leaves WHERE seq >= 3 ORDER BY seq",
      ),
    ).toEqual([
      { seq: 3, event_id: receipts[0] },
      { seq: 4, event_id: receipts[1] },
    ]);
    const result = await verifyLog(store, head);
    expect(result).toMatchObject({ ok: true, leaves: 5, defect: null });
  });

  const breaks: Array<[what: string, sql: string, reason: string]> = [
    ["deleted", "DELETE FROM receipts WHERE id = ?", "the leaf's receipt row is missing"],
    [
      "remote address edited",
      "UPDATE receipts SET remote_address = '192.0.2.1' WHERE id = ?",
      "the receipt as stored does not match its leaf",
    ],
    [
      "secret index edited",
      "UPDATE receipts SET secret_index = 5 WHERE id = ?",
      "the receipt as stored does not match its leaf",
    ],
    [
      "receive time edited",
      "UPDATE receipts SET received_at = received_at - 1000 WHERE id = ?",
      "the receipt as stored does not match its leaf",
    ],
  ];

  it.each(breaks)("a duplicate's receipt row %s is named", async (_what, sql, reason) => {
    const { db, store } = await openedStore(open);
    const { receipts, head } = await withDuplicates(store);
    await db.rows(sql, [receipts[1]]);
    expect(await verifyLog(store, head)).toEqual({
      ok: false,
      leaves: 4,
      defect: { seq: 4, eventId: receipts[1], reason },
      coverage: {
        notConfigured: new Map(),
        digestOnly: [],
        retention: { leaves: [], recordedIn: [], unrecorded: [] },
      },
    });
  });
});
