import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { freshDatabase, postgresMigrationCount } from "../helpers/postgres.ts";
import { acceptInput, runStoreConformance } from "./conformance.ts";
import { runQueueConformance } from "./queue-conformance.ts";

let database: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  await database.cleanup();
});

async function openFresh() {
  const store = openPostgresStore(database.schemaUrl());
  await store.migrate();
  return { store, cleanup: () => store.close() };
}

runStoreConformance("postgres", openFresh);
runQueueConformance("postgres", openFresh, {
  createTable: "CREATE TABLE credits (order_id text NOT NULL)",
  insert: "INSERT INTO credits (order_id) VALUES ($1)",
  count: "SELECT count(*)::int AS n FROM credits",
});

describe("PostgreSQL specifics", () => {
  it("applies migrations once when several processes start at once (advisory lock)", async () => {
    const url = database.schemaUrl();
    const stores = Array.from({ length: 4 }, () => openPostgresStore(url));
    const reports = await Promise.all(stores.map((s) => s.migrate()));
    expect(reports.map((r) => r.applied.length).sort()).toEqual([0, 0, 0, postgresMigrationCount]);
    expect(new Set(reports.map((r) => r.current))).toEqual(new Set([postgresMigrationCount]));
    await Promise.all(stores.map((s) => s.close()));
  });

  it("ping writes the store's clock to the heartbeat, not Date.now (one clock per store)", async () => {
    const url = database.schemaUrl();
    const store = openPostgresStore(url, { now: () => 1_234_567.9 });
    await store.migrate();
    await store.ping();
    await store.close();
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const schema = new URL(url).searchParams.get("schema");
      const { rows } = await client.query(
        `SELECT at::float8 AS at FROM ${schema}.hookinbox_heartbeat`,
      );
      expect(rows).toEqual([{ at: 1_234_567 }]);
    } finally {
      await client.end();
    }
  });

  it("replays atomically, one event or in bulk: when the event's refresh fails, no replay delivery is left behind", async () => {
    const url = database.schemaUrl();
    const schema = new URL(url).searchParams.get("schema");
    const store = openPostgresStore(url);
    await store.migrate();
    const { eventId } = await store.accept(acceptInput());
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      // Every update of an events row now fails, as a crash between the two steps would.
      await client.query(`CREATE FUNCTION ${schema}.refuse() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`);
      await client.query(`CREATE TRIGGER refuse BEFORE UPDATE ON ${schema}.events
        FOR EACH ROW EXECUTE FUNCTION ${schema}.refuse()`);
      await expect(
        store.replayEvent({ eventId, targets: ["stripe:*"], now: Date.now() }),
      ).rejects.toThrow();
      // The bulk replay's batches (core/replay.ts) insert through the same transaction.
      await expect(
        store.replayWhere({}, { now: Date.now(), targetsFor: () => ["stripe:*"] }),
      ).rejects.toThrow();
      const { rows } = await client.query(
        `SELECT count(*)::int AS n FROM ${schema}.deliveries WHERE event_id = $1`,
        [eventId],
      );
      expect(rows).toEqual([{ n: 0 }]);
    } finally {
      await client.end();
      await store.close();
    }
  });

  it("deduplicates 50 concurrent accepts from 5 separate pools by the unique constraint alone", async () => {
    const url = database.schemaUrl();
    const stores = Array.from({ length: 5 }, () => openPostgresStore(url));
    await stores[0]!.migrate();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        stores[i % 5]!.accept(acceptInput({ identity: { dedupKey: "evt_race" }, targets: ["t"] })),
      ),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(results.reduce((n, r) => n + r.deliveries, 0)).toBe(1);
    const event = await stores[0]!.getEvent(results[0]!.eventId);
    expect(event!.receipts).toHaveLength(50);
    expect(event!.deliveries).toHaveLength(1);
    await Promise.all(stores.map((s) => s.close()));
  });
});
