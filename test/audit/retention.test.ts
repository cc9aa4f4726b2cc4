import { describe, expect, it } from "vitest";
import { sha256 } from "../../src/audit/leaf.ts";
import { currentTree, proveInclusion, verifyLog } from "../../src/audit/log.ts";
import { verifyInclusion } from "../../src/audit/merkle.ts";
import { purgeOldPayloads } from "../../src/audit/retention.ts";
import { storeFactories } from "../helpers/stores.ts";
import { acceptInput } from "../store/conformance.ts";
import { openedStore } from "./opened-store.ts";

// Payload retention on each store: bodies and headers of finished events are purged in batches,
// events with an unfinished delivery keep theirs, the API says which were purged, and the log
// still verifies and proves every event; a body put back into a purged row is caught.

describe.each(storeFactories())("payload retention ($name)", ({ open }) => {
  it("purges finished events' payloads in batches, keeps pending ones, and proofs still verify", async () => {
    const { db, store } = await openedStore(open);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const input = acceptInput({
        body: new TextEncoder().encode(`{"id":"evt_${i}"}`),
        identity: { dedupKey: `evt_${i}` },
        // Events 0 and 1 have a pending delivery: their payloads must stay.
        ...(i < 2 ? { targets: ["stripe:*"] } : {}),
      });
      ids.push((await store.accept(input)).eventId);
    }
    const head = await currentTree(store);
    // Everything received before a minute from now is old enough.
    const options = { payloadsMs: 0, now: Date.now() + 60_000, batchSize: 2 };

    expect(await purgeOldPayloads(store, { ...options, dryRun: true })).toBe(5);
    expect(await db.count("SELECT count(*) AS n FROM events WHERE purged_at IS NOT NULL")).toBe(0);
    expect(await purgeOldPayloads(store, { ...options, dryRun: false })).toBe(5);
    expect(await purgeOldPayloads(store, { ...options, dryRun: false })).toBe(0);
    expect(await db.count("SELECT count(*) AS n FROM events WHERE purged_at IS NOT NULL")).toBe(5);

    const purged = (await store.getEvent(ids[4]!))!;
    expect(purged.purgedAt).not.toBeNull();
    expect(purged.body.byteLength).toBe(0);
    expect(purged.headers).toEqual([]);
    const kept = (await store.getEvent(ids[0]!))!;
    expect(kept.purgedAt).toBeNull();
    expect(new TextDecoder().decode(kept.body)).toBe('{"id":"evt_0"}');

    expect(await verifyLog(store, head)).toEqual({
      ok: true,
      leaves: 7,
      defect: null,
      coverage: expect.any(Object),
    });
    for (const [seq, id] of ids.entries()) {
      const proof = (await proveInclusion(store, id, head.size))!;
      expect(verifyInclusion(seq, head.size, proof.leafHash, proof.proof, head.root)).toBe(true);
    }

    // A different body put back into a purged row, or a changed kept digest, is caught.
    const other = db.kind === "sqlite" ? "X'7b7d'" : "'\\x7b7d'::bytea";
    await db.exec(`UPDATE events SET body = ${other} WHERE id = '${ids[4]}'`);
    expect((await verifyLog(store, head)).defect).toEqual({
      seq: 4,
      eventId: ids[4],
      reason: "the event or its first receipt as stored does not match its leaf",
    });
    const empty = db.kind === "sqlite" ? "X''" : "'\\x'::bytea";
    const fake = `${db.kind === "sqlite" ? "X'" : "'\\x"}${sha256(Buffer.from("{}")).toString("hex")}'`;
    await db.exec(
      `UPDATE events SET body = ${empty}, body_sha256 = ${fake} WHERE id = '${ids[4]}'`,
    );
    expect((await verifyLog(store, head)).defect?.eventId).toBe(ids[4]);
  });
});
