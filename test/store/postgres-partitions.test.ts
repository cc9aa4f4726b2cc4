import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPostgresMigrations } from "../../src/store/postgres/migrate.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { freshDatabase, migrateSchemaTo } from "../helpers/postgres.ts";
import { testPool } from "../helpers/stores.ts";
import { acceptInput } from "./conformance.ts";

// PostgreSQL's day partitions (migration 009): dedup stays exact when copies of one event race
// across a partition boundary (event_dedup decides, not a per-partition index), and a schema
// at 008 with rows in it migrates, its events attached as one partition and its receipts split.

let database: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  await database.cleanup();
});

const day = 86_400_000;

describe("PostgreSQL day partitions", () => {
  it("keeps dedup exact when 40 copies race from 5 pools across a day boundary: 1 event, 1 delivery", async () => {
    const url = database.schemaUrl();
    const stores = Array.from({ length: 5 }, () => openPostgresStore(url));
    await stores[0]!.migrate();
    const midnight = Date.UTC(2026, 5, 1);
    // The first 20 calls make ids in the day before midnight, the next 20 in the day after
    // (ids are made when the call starts), so the candidates fall in two partitions.
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        stores[i % 5]!.accept(
          acceptInput({
            identity: { dedupKey: "evt_boundary" },
            receivedAt: i < 20 ? midnight - 1 - i : midnight + i,
            targets: ["t"],
          }),
        ),
      ),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(results.map((r) => r.eventId)).size).toBe(1);
    expect(results.reduce((n, r) => n + r.deliveries, 0)).toBe(1);
    const event = await stores[0]!.getEvent(results[0]!.eventId);
    expect(event!.receipts).toHaveLength(40);
    expect(event!.receipts.filter((r) => r.duplicate)).toHaveLength(39);
    expect(event!.deliveries).toHaveLength(1);
    const pool = testPool({ connectionString: database.url });
    const schema = new URL(url).searchParams.get("schema")!;
    const parts = await pool.query<{ relname: string; n: number }>(
      `SELECT c.relname, (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I.%I', $1::text, c.relname), false, true, '')))[1]::text::int AS n
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = format('%I.receipts_accepted', $1::text)::regclass
         AND c.relname IN ('receipts_accepted_p20260531', 'receipts_accepted_p20260601') ORDER BY 1`,
      [schema],
    );
    // The receipts landed on both sides of midnight; still one event.
    expect(parts.rows).toEqual([
      { relname: "receipts_accepted_p20260531", n: 20 },
      { relname: "receipts_accepted_p20260601", n: 20 },
    ]);
    expect((await pool.query(`SELECT count(*)::int AS n FROM "${schema}".events`)).rows).toEqual([
      { n: 1 },
    ]);
    await pool.end();
    await Promise.all(stores.map((s) => s.close()));
  });

  it("migrates a schema at 008 with rows: events attached as one partition, dedup keys and receipts carried over", async () => {
    const url = database.schemaUrl();
    const schema = new URL(url).searchParams.get("schema")!;
    const pool = testPool({ connectionString: database.url, max: 1 });
    await migrateSchemaTo(pool, schema, 8);
    // Rows as the 008 schema held them: two events (one with a pending delivery), their
    // receipts, a duplicate receipt and a rejection, on two days.
    const t0 = Date.UTC(2026, 3, 10);
    await pool.query(
      `INSERT INTO events (id, source, dedup_key, status, received_at, body, headers) VALUES
         ('evt_01JRK00000AAAAAAAAAAAAAAAA', 'stripe', 'k1', 'ignored', ${t0}, '\\x7b7d', '[]'),
         ('evt_01JRN00000AAAAAAAAAAAAAAAA', 'stripe', 'k2', 'pending', ${t0 + day}, '\\x7b7d', '[]')`,
    );
    await pool.query(
      `INSERT INTO receipts (id, event_id, source, received_at, duplicate) VALUES
         ('rcp_01JRK00000AAAAAAAAAAAAAAAA', 'evt_01JRK00000AAAAAAAAAAAAAAAA', 'stripe', ${t0}, false),
         ('rcp_01JRN00000AAAAAAAAAAAAAAAA', 'evt_01JRN00000AAAAAAAAAAAAAAAA', 'stripe', ${t0 + day}, false),
         ('rcp_01JRN00000BBBBBBBBBBBBBBBB', 'evt_01JRK00000AAAAAAAAAAAAAAAA', 'stripe', ${t0 + day}, true)`,
    );
    await pool.query(
      `INSERT INTO receipts (id, event_id, source, received_at, status, code) VALUES
         ('rcp_01JRN00000CCCCCCCCCCCCCCCC', NULL, 'stripe', ${t0 + day}, 401, 'HOOKINBOX_SIGNATURE_MISMATCH')`,
    );
    await pool.query(
      `INSERT INTO deliveries (id, event_id, target, order_version, status, run_at, created_at, updated_at)
       VALUES ('dlv_1', 'evt_01JRN00000AAAAAAAAAAAAAAAA', 't', -1e308, 'pending', ${t0 + day}, ${t0 + day}, ${t0 + day})`,
    );
    await pool.query("RESET search_path");

    const store = openPostgresStore(url);
    expect((await store.migrate()).applied).toEqual(
      loadPostgresMigrations()
        .filter((m) => m.id > 8)
        .map((m) => m.name),
    );
    const count = async (sql: string) =>
      (await pool.query<{ n: number }>(sql.replaceAll("$s", `"${schema}"`))).rows[0]!.n;
    expect(await count("SELECT count(*)::int AS n FROM $s.events")).toBe(2);
    expect(await count("SELECT count(*)::int AS n FROM $s.events_legacy")).toBe(2);
    expect(await count("SELECT count(*)::int AS n FROM $s.event_dedup")).toBe(2);
    expect(await count("SELECT count(*)::int AS n FROM $s.receipts_accepted")).toBe(3);
    expect(await count("SELECT count(*)::int AS n FROM $s.receipts_rejected")).toBe(1);
    // The old event is still the one its key names, with its receipts; new events go on.
    const dup = await store.accept(
      acceptInput({ identity: { dedupKey: "k1" }, receivedAt: t0 + 2 * day }),
    );
    expect(dup).toMatchObject({ duplicate: true, eventId: "evt_01JRK00000AAAAAAAAAAAAAAAA" });
    expect((await store.getEvent(dup.eventId))!.receipts).toHaveLength(3);
    const fresh = await store.accept(acceptInput({ identity: { dedupKey: "k3" }, targets: ["t"] }));
    expect(fresh).toMatchObject({ duplicate: false, deliveries: 1 });
    expect((await store.getEvent("evt_01JRN00000AAAAAAAAAAAAAAAA"))!.deliveries).toHaveLength(1);
    expect((await store.listReceipts({ rejected: true })).items.map((r) => r.id)).toEqual([
      "rcp_01JRN00000CCCCCCCCCCCCCCCC",
    ]);
    await store.close();
    await pool.end();
  });
});
