import { describe, expect, it } from "vitest";
import { purgeOldPayloads, runRetention } from "../../src/audit/retention.ts";
import { SCAN_FACTOR } from "../../src/store/core/scan-window.ts";
import { storeFactories } from "../helpers/stores.ts";
import { acceptInput } from "../store/conformance.ts";
import { eventsOnly, openedStore } from "./opened-store.ts";

// On SQLite a retention batch runs inside the write transaction, so it must not walk far: behind
// a backlog of events whose deliveries are unfinished (kept), a batch looks at no more than
// limit × SCAN_FACTOR ids and hands back a cursor, and the run still reaches what lies beyond.

const sqlite = storeFactories().filter((f) => f.name === "sqlite");
const pending = 300;
const finished = 5;

describe.each(sqlite)("retention behind a backlog of unfinished events ($name)", ({ open }) => {
  it("walks at most limit × SCAN_FACTOR ids per batch, and the run still purges and removes what is beyond", async () => {
    const { db, store } = await openedStore(open);
    for (let i = 0; i < pending + finished; i++) {
      const input = acceptInput({
        identity: { dedupKey: `evt_${i}` },
        // The first 300 have a pending delivery; the last 5 none (finished).
        ...(i < pending ? { targets: ["stripe:*"] } : {}),
      });
      await store.accept(input);
    }
    const ids = (await db.rows<{ id: string }>("SELECT id FROM events ORDER BY id")).map(
      (r) => r.id,
    );
    const now = Date.now() + 60_000;
    const limit = 2;

    // Payloads: the first batch finds only kept events in its window and stops at its end.
    const first = await store.purgePayloads({ before: now, afterId: "", limit, now, dryRun: true });
    expect(first).toEqual({ purged: 0, nextAfterId: ids[limit * SCAN_FACTOR - 1] });
    expect(
      await purgeOldPayloads(store, { payloadsMs: 0, now, dryRun: false, batchSize: limit }),
    ).toBe(finished);
    expect(await db.count("SELECT count(*) AS n FROM events WHERE purged_at IS NOT NULL")).toBe(
      finished,
    );

    // Whole events: the same bound, and the finished ones go.
    const step = await store.retentionStep({
      kind: "events",
      before: now,
      cursor: "",
      limit,
      now,
      dryRun: true,
    });
    expect(step).toEqual({ removed: 0, cursor: ids[limit * SCAN_FACTOR - 1] });
    const removed = await runRetention(store, eventsOnly(0), {
      now,
      dryRun: false,
      batchSize: limit,
    });
    expect(removed.events).toBe(finished);
    expect(await db.count("SELECT count(*) AS n FROM events")).toBe(pending);
  });
});
