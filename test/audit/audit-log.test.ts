import { describe, expect, it } from "vitest";
import { firstReceiptLeafHashOf } from "../../src/audit/first-receipt-leaf.ts";
import { leafFieldsOf } from "../../src/audit/leaf.ts";
import {
  currentTree,
  proveConsistency,
  proveInclusion,
  rootAt,
  verifyLog,
} from "../../src/audit/log.ts";
import { treeRoot, verifyConsistency, verifyInclusion } from "../../src/audit/merkle.ts";
import { firstReceiptIdOf } from "../../src/audit/retention-record.ts";
import { storeFactories } from "../helpers/stores.ts";
import { acceptInput } from "../store/conformance.ts";
import { openedStore } from "./opened-store.ts";

// The audit log on each store: accepts append leaves in their transaction (duplicates append
// nothing), heads and proofs come from stored subtrees and match an in-memory tree of the same
// events, and verify names the first tampered row.

const body = (i: number) => new TextEncoder().encode(`{"id":"evt_${i}","n":${i}}`);

describe.each(storeFactories())("audit log ($name)", ({ open }) => {
  it("appends one leaf per new event, a receipt leaf per duplicate, and proves every one", async () => {
    const { db, store } = await openedStore(open);
    const inputs = Array.from({ length: 21 }, (_, i) =>
      acceptInput({
        body: body(i),
        receivedAt: 1_000 + i,
        identity: { dedupKey: `evt_${i}` },
        headers: [["X-N", String(i)]],
      }),
    );
    const ids: string[] = [];
    for (const input of inputs) ids.push((await store.accept(input)).eventId);
    expect(await db.count("SELECT count(*) AS n FROM audit_leaves")).toBe(21);
    // 21 leaves close 10 + 5 + 2 + 1 perfect subtrees of 2, 4, 8 and 16 leaves.
    expect(await db.count("SELECT count(*) AS n FROM audit_nodes")).toBe(18);

    // Each new event's leaf is version 2 kind 1: the event and its first receipt's own row.
    const expected = inputs.map((input, seq) =>
      firstReceiptLeafHashOf({
        ...leafFieldsOf(seq, { ...input, dedupKey: input.identity.dedupKey }),
        receiptId: firstReceiptIdOf(ids[seq]!),
        remoteAddress: input.remoteAddress,
        secretIndex: input.secretIndex,
      }),
    );
    const tree = await currentTree(store);
    expect(tree.size).toBe(21);
    expect(tree.root.equals(treeRoot(expected))).toBe(true);
    for (let size = 1; size <= 21; size++) {
      expect((await rootAt(store, size)).equals(treeRoot(expected.slice(0, size)))).toBe(true);
    }
    for (const [seq, id] of ids.entries()) {
      const proof = await proveInclusion(store, id, 21);
      expect(proof?.seq).toBe(seq);
      expect(verifyInclusion(seq, 21, expected[seq]!, proof!.proof, tree.root)).toBe(true);
    }
    for (let m = 1; m <= 21; m++) {
      const proof = await proveConsistency(store, m, 21);
      const rootM = treeRoot(expected.slice(0, m));
      expect(verifyConsistency(m, 21, rootM, tree.root, proof)).toBe(true);
    }
    expect(await verifyLog(store, tree, { pageSize: 4 })).toEqual({
      ok: true,
      leaves: 21,
      defect: null,
      coverage: expect.any(Object),
    });
    // A duplicate appends its receipt's leaf (leaf 21), named by the receipt's id.
    const dup = await store.accept(inputs[3]!);
    expect(dup.duplicate).toBe(true);
    expect(await db.rows("SELECT seq, event_id FROM audit_leaves WHERE seq = 21")).toEqual([
      { seq: 21, event_id: dup.receiptId },
    ]);
    expect((await currentTree(store)).size).toBe(22);
  });

  it("verify names a changed body, a missing leaf and a truncated log", async () => {
    const { db, store } = await openedStore(open);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (await store.accept(acceptInput({ body: body(i), identity: { dedupKey: `e${i}` } })))
          .eventId,
      );
    }
    const head = await currentTree(store);
    const hex = db.kind === "sqlite" ? "X'7b7d'" : "'\\x7b7d'::bytea";
    await db.exec(`UPDATE events SET body = ${hex} WHERE id = '${ids[2]}'`);
    expect((await verifyLog(store, head)).defect).toEqual({
      seq: 2,
      eventId: ids[2],
      reason: "the event or its first receipt as stored does not match its leaf",
    });
    await db.exec(`DELETE FROM audit_leaves WHERE seq = 2`);
    expect((await verifyLog(store, head)).defect?.reason).toBe("leaf 2 is missing (next is 3)");
    await db.exec(`DELETE FROM audit_leaves WHERE seq >= 2`);
    expect((await verifyLog(store, head)).defect?.reason).toBe(
      "the log ends at 2 leaves; the head has 5",
    );
  });
});
