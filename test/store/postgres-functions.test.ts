// The functions in hookinbox's PostgreSQL schema, against an allowlist: since migration 016 the
// only one is 012's audit batch append (retention records its batches through it). 016 dropped
// 009's ULID and partition helpers (partitions are made with plain DDL, bounds from src/ids.ts)
// and 011's unused append. A new function in a migration fails the first test until it is added
// here, with its reason. Also: 016 applies on a schema at 015, whose partitions stay, and the
// TypeScript path makes the next ones with the names and bounds 009's function gave them.
import type pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { loadPostgresMigrations } from "../../src/store/postgres/migrate.ts";
import { dayPartitions, ensurePartitionsPostgres } from "../../src/store/postgres/partitions.ts";
import { schemaNames } from "../../src/store/postgres/schema-names.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { freshDatabase, migrateSchemaTo } from "../helpers/postgres.ts";
import { testPool } from "../helpers/stores.ts";
import { acceptInput } from "./conformance.ts";

/** Every function hookinbox's schema may hold, by signature. */
const allowedFunctions = [
  // 012: the audit log's batch append, called by postgres/retention-step.ts.
  "hookinbox_audit_append_leaves(text[],bytea[],bytea[])",
];

const day = 86_400_000;

let database: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  database = await freshDatabase();
  return () => database.cleanup();
});

/** A new schema on the test database: its store URL and its name. */
function newSchema(): { url: string; schema: string } {
  const url = database.schemaUrl();
  return { url, schema: new URL(url).searchParams.get("schema")! };
}

/** The functions (any kind: functions, procedures, aggregates) in `schema`, by signature. */
async function functionsOf(pool: pg.Pool, schema: string): Promise<string[]> {
  const { rows } = await pool.query<{ signature: string }>(
    `SELECT p.proname || '(' || oidvectortypes(p.proargtypes) || ')' AS signature
     FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = $1 ORDER BY 1`,
    [schema],
  );
  return rows.map((r) => r.signature.replaceAll(", ", ","));
}

/** The bounds of each day partition of `schema`'s events and receipts, by name. */
async function partitionBounds(pool: pg.Pool, schema: string): Promise<Record<string, string>> {
  const { rows } = await pool.query<{ relname: string; bound: string }>(
    `SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relispartition AND c.relkind = 'r' AND c.relname ~ '_p[0-9]{8}$'
     ORDER BY 1`,
    [schema],
  );
  return Object.fromEntries(rows.map((r) => [r.relname, r.bound]));
}

/** What `dayPartitions` would make for a partition named `<parent>_pYYYYMMDD`, as pg prints it. */
function expectedBound(name: string): string {
  const [, y, m, d] = /_p(\d{4})(\d{2})(\d{2})$/.exec(name)!;
  const partition = dayPartitions(schemaNames("x"), Date.UTC(+y!, +m! - 1, +d!)).find((p) =>
    p.name.endsWith(`.${name}`),
  )!;
  return partition.sql.slice(partition.sql.indexOf("FOR VALUES"));
}

describe("PostgreSQL schema functions", () => {
  it("a freshly migrated schema holds only the allowlisted functions, and no triggers", async () => {
    const { url, schema } = newSchema();
    const store = openPostgresStore(url);
    await store.migrate();
    const pool = testPool({ connectionString: database.url, max: 1 });
    expect(await functionsOf(pool, schema)).toEqual(allowedFunctions);
    const { rows } = await pool.query(
      `SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND NOT t.tgisinternal`,
      [schema],
    );
    expect(rows).toEqual([]);
    await pool.end();
    await store.close();
  });

  it("016 on a schema at 015: its functions go, its partitions stay, new days are made in TypeScript with 009's names and bounds", async () => {
    const { url, schema } = newSchema();
    const pool = testPool({ connectionString: database.url, max: 1 });
    await migrateSchemaTo(pool, schema, 15);
    // A day far from today made by 009's function, as an hourly job of the previous version did.
    const farDay = Date.UTC(2031, 1, 3);
    expect((await pool.query(`SELECT hookinbox_ensure_partitions(${farDay}) AS n`)).rows).toEqual([
      { n: 3 },
    ]);
    await pool.query("RESET search_path");
    expect(await functionsOf(pool, schema)).toEqual([
      "hookinbox_audit_append(text[],bytea,bytea[])",
      "hookinbox_audit_append_leaves(text[],bytea[],bytea[])",
      "hookinbox_ensure_partitions(bigint)",
      "hookinbox_ulid_ms(text)",
      "hookinbox_ulid_time(bigint)",
    ]);
    const before = await partitionBounds(pool, schema);
    // Yesterday to a week ahead (009's migration) and the far day, three tables each.
    expect(Object.keys(before)).toHaveLength(30);
    // Every partition 009 made has the bounds the TypeScript path computes for its day.
    for (const [name, bound] of Object.entries(before)) expect(bound).toBe(expectedBound(name));

    const store = openPostgresStore(url);
    expect((await store.migrate()).applied).toEqual(
      loadPostgresMigrations()
        .filter((m) => m.id > 15)
        .map((m) => m.name),
    );
    expect(await functionsOf(pool, schema)).toEqual(allowedFunctions);
    expect(await partitionBounds(pool, schema)).toEqual(before);

    // The worker's upkeep a week on: the days not made yet, plain DDL.
    const now = Date.now();
    const made = await store.maintainPartitions(now + 7 * day);
    expect(made).toBe(3 * 7);
    const after = await partitionBounds(pool, schema);
    expect(Object.keys(after)).toHaveLength(30 + 3 * 7);
    for (const [name, bound] of Object.entries(after)) expect(bound).toBe(expectedBound(name));
    // Nothing left to make: a second run makes none.
    expect(await store.maintainPartitions(now + 7 * day)).toBe(0);

    // An accept into a day with no partition makes it on demand (withPartition).
    const later = Date.UTC(2032, 6, 9, 12);
    const accepted = await store.accept(
      acceptInput({ identity: { dedupKey: "k-later" }, receivedAt: later }),
    );
    expect(accepted.duplicate).toBe(false);
    expect(await store.getEvent(accepted.eventId)).not.toBeNull();
    expect(Object.keys(await partitionBounds(pool, schema))).toEqual(
      expect.arrayContaining([
        "events_p20320709",
        "receipts_accepted_p20320709",
        "receipts_rejected_p20320709",
      ]),
    );
    await store.close();
    await pool.end();
  });

  it("callers racing over the same days make each partition once", async () => {
    const { url, schema } = newSchema();
    const store = openPostgresStore(url);
    await store.migrate();
    await store.close();
    const pools = Array.from({ length: 4 }, () =>
      testPool({ connectionString: database.url, max: 1 }),
    );
    const from = Date.UTC(2033, 2, 1);
    const made = await Promise.all(
      pools.map((pool) =>
        ensurePartitionsPostgres(pool, schemaNames(schema), from, from + 2 * day),
      ),
    );
    expect(made.reduce((a, b) => a + b, 0)).toBe(9);
    expect(Object.keys(await partitionBounds(pools[0]!, schema))).toEqual(
      expect.arrayContaining(["events_p20330301", "events_p20330302", "events_p20330303"]),
    );
    await Promise.all(pools.map((pool) => pool.end()));
  });
});
