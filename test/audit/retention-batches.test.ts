import { describe, expect, it } from "vitest";
import { runRetention } from "../../src/audit/retention.ts";
import { ulidTimePrefix } from "../../src/ids.ts";
import { parsePostgresUrl } from "../../src/store/postgres/connection.ts";
import { deleteProcessingBatchPostgres } from "../../src/store/postgres/retention-step.ts";
import { schemaNames } from "../../src/store/postgres/schema-names.ts";
import { schemaPool, storeFactories } from "../helpers/stores.ts";
import { acceptInput } from "../store/conformance.ts";
import { eventsOnly, openedStore } from "./opened-store.ts";

// On PostgreSQL a whole expired day goes by DROP, but deliveries, attempts and effects are not
// partitioned: they go first, in bounded batches of their own short transactions, never as one
// statement over the whole day; a delivery made since (a replay) keeps itself and its effects.

const day = 86_400_000;
const now = Date.UTC(2026, 2, 1, 12);
const dayStart = Math.floor((now - 40 * day) / day) * day;
const postgres = storeFactories().filter((f) => f.name === "postgres");

describe.each(postgres)("retention batches a dropped day's processing rows ($name)", ({ open }) => {
  it("deletes them in bounded batches, keeps a pending delivery's, then drops the day", async () => {
    const { db, store } = await openedStore(open);
    for (let i = 0; i < 6; i++) {
      const input = acceptInput({
        identity: { dedupKey: `evt_${i}` },
        receivedAt: dayStart + 3_600_000 + i,
        targets: ["t"],
      });
      await store.accept(input);
    }
    // Five finished deliveries with two attempts each; the sixth still pending; one effect each.
    const pendingEvent = (await db.rows<{ id: string }>("SELECT max(id) AS id FROM events"))[0]!.id;
    await db.rows("UPDATE deliveries SET status = 'done' WHERE event_id <> ?", [pendingEvent]);
    await db.exec(
      `INSERT INTO attempts (id, delivery_id, attempt, started_at, outcome)
       SELECT 'att_' || id || '_' || n, id, n, 0, CASE n WHEN 1 THEN 'error' ELSE 'success' END
       FROM deliveries, generate_series(1, 2) AS n`,
    );
    await db.exec(
      `INSERT INTO effects (id, event_id, target, name, status, on_stale, stale_after_ms)
       SELECT 'eff_' || id, event_id, target, 'charge', 'done', 'reclaim', 1000 FROM deliveries`,
    );
    const counts = async () => ({
      deliveries: await db.count("SELECT count(*) AS n FROM deliveries"),
      attempts: await db.count("SELECT count(*) AS n FROM attempts"),
      effects: await db.count("SELECT count(*) AS n FROM effects"),
    });
    expect(await counts()).toEqual({ deliveries: 6, attempts: 12, effects: 6 });

    const pool = schemaPool(db.url, 1);
    const t = schemaNames(parsePostgresUrl(db.url).schema);
    const [from, to] = [`evt_${ulidTimePrefix(dayStart)}`, `evt_${ulidTimePrefix(dayStart + day)}`];
    const batches: number[] = [];
    const after: Array<Awaited<ReturnType<typeof counts>>> = [];
    for (;;) {
      batches.push(await deleteProcessingBatchPostgres(pool, t, from, to, 2));
      after.push(await counts());
      if (batches.at(-1) === 0) break;
    }
    await pool.end();
    // At most 2 deliveries and 2 effects a batch; the pending delivery and its effect stay.
    expect(batches).toEqual([4, 4, 2, 0]);
    expect(after.map((c) => c.deliveries)).toEqual([4, 2, 1, 1]);
    expect(after.map((c) => c.attempts)).toEqual([8, 4, 2, 2]);
    expect(after.map((c) => c.effects)).toEqual([4, 2, 1, 1]);

    // Once it is done too, the sweep batches what is left and drops the whole day.
    await db.rows("UPDATE deliveries SET status = 'done'");
    const partition = `events_p${new Date(dayStart).toISOString().slice(0, 10).replaceAll("-", "")}`;
    expect(
      await db.count("SELECT count(*) AS n FROM pg_class WHERE relname = ?", [partition]),
    ).toBe(1);
    const removed = await runRetention(store, eventsOnly(36 * day), {
      now,
      dryRun: false,
      batchSize: 2,
    });
    expect(removed.events).toBe(6);
    expect(await counts()).toEqual({ deliveries: 0, attempts: 0, effects: 0 });
    expect(
      await db.count("SELECT count(*) AS n FROM pg_class WHERE relname = ?", [partition]),
    ).toBe(0);
    expect(await db.count("SELECT count(*) AS n FROM events")).toBe(0);
  });
});
