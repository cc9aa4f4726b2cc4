// The rows a forwarded event writes on PostgreSQL (issue 24, "fewer writes per event on the hot
// tables"), counted exactly by row triggers installed after migration: each attempt is inserted
// by its claim and updated once, by the statement that ends it and stores the destination's
// answer; an event's row is rewritten only when its status changes. And migration 015 applies on
// a schema at 013 that holds rows. Real HTTP receivers on loopback, real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPostgresMigrations } from "../../src/store/postgres/migrate.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { destination, forwardingInbox, receiver } from "../forward/forward-env.ts";
import { freshDatabase, migrateSchemaTo } from "../helpers/postgres.ts";
import { until } from "../helpers/processing.ts";
import { storeFactories, type TestStore, testPool } from "../helpers/stores.ts";
import { acceptInput } from "./conformance.ts";

const postgres = storeFactories().filter((f) => f.name === "postgres");

/** Row triggers logging every insert, update and delete of the hot tables (partitions as their parent). */
async function logWrites(store: TestStore): Promise<() => Promise<Record<string, number>>> {
  await store.exec("CREATE TABLE public.write_log (tbl text NOT NULL, op text NOT NULL)");
  await store.exec(`CREATE FUNCTION public.log_write() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN INSERT INTO public.write_log VALUES (regexp_replace(TG_TABLE_NAME, '_p[0-9]{8}$', ''), TG_OP);
    RETURN NULL; END $$`);
  for (const table of ["events", "deliveries", "attempts"])
    await store.exec(`CREATE TRIGGER log_write AFTER INSERT OR UPDATE OR DELETE ON hookinbox.${table}
      FOR EACH ROW EXECUTE FUNCTION public.log_write()`);
  return async () => {
    const rows = await store.rows<{ key: string; n: number }>(
      "SELECT tbl || ' ' || op AS key, count(*)::int AS n FROM public.write_log GROUP BY 1 ORDER BY 1",
    );
    return Object.fromEntries(rows.map((r) => [r.key, r.n]));
  };
}

describe.each(postgres)("writes per forwarded event ($name)", (factory) => {
  it("20 forwarded events: one attempt insert and one update each, the event row written once", async () => {
    // One destination, so no end statement finds a sibling open and nothing is rechecked
    // (postgres-event-status-race.test.ts counts the events of two destinations ending at once).
    const app = await receiver();
    const env = await forwardingInbox(factory, { app: destination(app.url) });
    await env.inbox.store.migrate();
    const writes = await logWrites(env.store);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await env.post(`msg_w${i}`, { type: "t" })).eventId);
    const worker = env.inbox.startWorker();
    await until(
      async () =>
        (await env.store.count(
          "SELECT count(*) AS n FROM hookinbox.events WHERE status = 'done'",
        )) === 20,
      20_000,
      "every event done",
    );
    await worker.stop();
    expect(app.requests).toHaveLength(20);
    // 20 deliveries: each claimed (one update) and completed (one update); its attempt inserted
    // by the claim and updated once, with the answer; each event's status written once (pending →
    // done; the next test shows a delivery that leaves it pending writes nothing).
    expect(await writes()).toEqual({
      "attempts INSERT": 20,
      "attempts UPDATE": 20,
      "deliveries INSERT": 20,
      "deliveries UPDATE": 40,
      "events INSERT": 20,
      "events UPDATE": 20,
    });
    expect(
      await env.store.rows(
        `SELECT outcome, response_status, latency_ms IS NOT NULL AS timed, count(*)::int AS n
         FROM hookinbox.attempts GROUP BY 1, 2, 3`,
      ),
    ).toEqual([{ outcome: "success", response_status: 200, timed: true, n: 20 }]);
  });

  it("a 500 then a 200: two attempts, each written once with its own answer", async () => {
    const app = await receiver((_r, index) =>
      index === 0 ? { status: 500, body: "boom" } : { status: 200 },
    );
    const env = await forwardingInbox(factory, { app: destination(app.url) });
    await env.inbox.store.migrate();
    const writes = await logWrites(env.store);
    const { eventId } = await env.post("msg_retry", { type: "t" });
    const worker = env.inbox.startWorker();
    await until(async () => (await env.inbox.store.getEvent(eventId))?.status === "done");
    await worker.stop();
    expect(await writes()).toEqual({
      "attempts INSERT": 2,
      "attempts UPDATE": 2,
      "deliveries INSERT": 1,
      "deliveries UPDATE": 4,
      "events INSERT": 1,
      "events UPDATE": 1,
    });
    const log = (await env.inbox.store.getEvent(eventId))!.deliveries[0]!.attemptLog!;
    expect(log.map((a) => [a.outcome, a.response?.status, a.response?.body])).toEqual([
      ["error", 500, "boom"],
      ["success", 200, ""],
    ]);
  });

  it("an event's row is rewritten only when its status changes: two deliveries ended one at a time, one write", async () => {
    const db = await factory.open();
    const store = openPostgresStore(db.url);
    try {
      await store.migrate();
      const writes = await logWrites(db);
      const t0 = Date.UTC(2026, 10, 30, 12);
      const { eventId } = await store.accept(
        acceptInput({ receivedAt: t0, identity: { orderingKey: null }, targets: ["a", "b"] }),
      );
      const claimed = await store.claimDeliveries({
        workerId: "w",
        limit: 10,
        leaseMs: 60_000,
        now: t0,
      });
      expect(claimed.map((d) => d.target).sort()).toEqual(["a", "b"]);
      // Each ends in its own statement: the first leaves the event pending (no write), the
      // second makes it done.
      for (const d of claimed)
        await store.completeDelivery({
          deliveryId: d.id,
          workerId: "w",
          attempt: d.attempt,
          now: t0 + 1,
          orderingKey: d.orderingKey,
          eventId: d.eventId,
        });
      expect((await writes())["events UPDATE"]).toBe(1);
      expect((await store.getEvent(eventId))?.status).toBe("done");
    } finally {
      await store.close();
      await db.cleanup();
    }
  });
});

describe("migration 015 (PostgreSQL)", () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(async () => {
    await database.cleanup();
  });

  it("applies on a schema at 013 with an event, its delivery and attempt: fillfactor 60, no foreign key, rows kept", async () => {
    const url = database.schemaUrl();
    const schema = new URL(url).searchParams.get("schema")!;
    const pool = testPool({ connectionString: database.url, max: 1 });
    const t0 = Date.UTC(2026, 3, 10);
    // Rows as a schema at 008 held them, carried through 009–013.
    await migrateSchemaTo(pool, schema, 13, async (id) => {
      if (id !== 8) return;
      await pool.query(
        `INSERT INTO events (id, source, dedup_key, status, received_at, body, headers)
         VALUES ('evt_01JRK00000AAAAAAAAAAAAAAAA', 'stripe', 'k1', 'done', ${t0}, '\\x7b7d', '[]')`,
      );
      await pool.query(
        `INSERT INTO deliveries (id, event_id, target, order_version, status, run_at, attempts, created_at, updated_at)
         VALUES ('dlv_1', 'evt_01JRK00000AAAAAAAAAAAAAAAA', 't', -1e308, 'done', ${t0}, 1, ${t0}, ${t0})`,
      );
      await pool.query(
        `INSERT INTO attempts (id, delivery_id, attempt, started_at, ended_at, outcome)
         VALUES ('att_1', 'dlv_1', 1, ${t0}, ${t0}, 'success')`,
      );
    });
    await pool.query("RESET search_path");

    const store = openPostgresStore(url);
    expect((await store.migrate()).applied).toEqual(
      loadPostgresMigrations()
        .filter((m) => m.id > 13)
        .map((m) => m.name),
    );
    const one = async (sql: string) => (await pool.query(sql.replaceAll("$s", `"${schema}"`))).rows;
    expect(
      await one(`SELECT reloptions FROM pg_class WHERE oid = '$s.attempts'::regclass`),
    ).toEqual([{ reloptions: ["fillfactor=60"] }]);
    expect(
      await one(
        `SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = '$s.attempts'::regclass AND contype = 'f'`,
      ),
    ).toEqual([{ n: 0 }]);
    const event = await store.getEvent("evt_01JRK00000AAAAAAAAAAAAAAAA");
    expect(event?.deliveries.map((d) => d.attemptLog?.map((a) => a.outcome))).toEqual([
      ["success"],
    ]);
    await store.close();
    await pool.end();
  });
});
