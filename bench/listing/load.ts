// Bulk loading for bench:listing: N events (and one receipt each, every 10th event with a
// duplicate receipt) written with one SQL statement per table, straight into a migrated store.
// The events are spread over 10 days; each id is its day's ULID time prefix followed by 16 digits,
// so ids are valid cursors, sort like the ones the store mints, and on PostgreSQL land in their
// day's partition (made with ensurePartitionsPostgres, as the worker makes them).
import Database from "better-sqlite3";
import pg from "pg";
import { ulidTimePrefix } from "../../src/ids.ts";
import { ensurePartitionsPostgres } from "../../src/store/postgres/partitions.ts";
import { schemaNames } from "../../src/store/postgres/schema-names.ts";

/** The shape of the loaded data, so scenarios know what exists. */
export const shape = {
  sources: ["stripe", "github", "shopify", "std"],
  types: 20,
  /** Every 100th event is dead, every 50th pending, the rest done. */
  statuses: "done / pending (1 in 50) / dead (1 in 100)",
} as const;

const day = 86_400_000;

const days = 10;

/** The 10 day starts (UTC midnight) before `now`, oldest first, and the events each gets. */
function daysOf(count: number, now: number) {
  const today = Math.floor(now / day) * day;
  const perDay = Math.ceil(count / days);
  return Array.from({ length: days }, (_, d) => {
    const at = today - (days - 1 - d) * day;
    const from = d * perDay + 1;
    return { at, prefix: ulidTimePrefix(at), from, to: Math.min(count, from + perDay - 1) };
  });
}

const sqliteSource =
  "CASE i % 4 WHEN 0 THEN 'stripe' WHEN 1 THEN 'github' WHEN 2 THEN 'shopify' ELSE 'std' END";
const pgSource = "(ARRAY['stripe','github','shopify','std'])[(i % 4) + 1]";
const status = "CASE WHEN i % 100 = 0 THEN 'dead' WHEN i % 50 = 0 THEN 'pending' ELSE 'done' END";

/** Loads `count` events into the SQLite file at `path` (already migrated). */
export function loadSqlite(path: string, count: number, now: number): void {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.transaction(() => {
    for (const { at, prefix, from, to } of daysOf(count, now)) {
      const series = `WITH RECURSIVE n(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM n WHERE i < ${to})`;
      const id = (kind: string, expr: string) => `'${kind}_${prefix}' || printf('%016d', ${expr})`;
      db.exec(
        `${series} INSERT INTO events (id, source, dedup_key, type, status, received_at, body, headers)
         SELECT ${id("evt", "i")}, ${sqliteSource}, 'evt_provider_' || i, 'type.' || (i % 20), ${status},
                ${at} + i, CAST('{"id":"evt_provider_' || i || '"}' AS BLOB),
                '[["content-type","application/json"]]'
         FROM n;
         ${series} INSERT INTO receipts (id, event_id, source, received_at, duplicate, size)
         SELECT ${id("rcp", "i * 2")}, ${id("evt", "i")}, ${sqliteSource}, ${at} + i, 0, 40 FROM n;
         ${series} INSERT INTO receipts (id, event_id, source, received_at, duplicate, size)
         SELECT ${id("rcp", "i * 2 + 1")}, ${id("evt", "i")}, ${sqliteSource}, ${at} + i + 1, 1, 40
         FROM n WHERE i % 10 = 0;`,
      );
    }
  })();
  db.exec("ANALYZE");
  db.close();
}

/** Loads `count` events into the PostgreSQL database at `url` (already migrated, schema `schema`). */
export async function loadPostgres(
  url: string,
  schema: string,
  count: number,
  now: number,
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  // Days the migration already made (today, yesterday) are skipped.
  const partitions = new pg.Pool({ connectionString: url, max: 1 });
  await client.connect();
  try {
    await client.query(`SET search_path = ${schema}`);
    for (const { at, prefix, from, to } of daysOf(count, now)) {
      const id = (kind: string, expr: string) =>
        `'${kind}_${prefix}' || lpad((${expr})::text, 16, '0')`;
      const series = `generate_series(${from}, ${to}) AS i`;
      await ensurePartitionsPostgres(partitions, schemaNames(schema), at, at);
      await client.query(
        `INSERT INTO events (id, source, dedup_key, type, status, received_at, body, headers)
         SELECT ${id("evt", "i")}, ${pgSource}, 'evt_provider_' || i, 'type.' || (i % 20), ${status},
                ${at} + i, convert_to('{"id":"evt_provider_' || i || '"}', 'UTF8'),
                '[["content-type","application/json"]]'::jsonb
         FROM ${series}`,
      );
      await client.query(
        `INSERT INTO event_dedup (source, dedup_key, event_id, received_at)
         SELECT ${pgSource}, 'evt_provider_' || i, ${id("evt", "i")}, ${at} + i FROM ${series}`,
      );
      await client.query(
        `INSERT INTO receipts (id, event_id, source, received_at, duplicate, size)
         SELECT ${id("rcp", "i * 2")}, ${id("evt", "i")}, ${pgSource}, ${at} + i, false, 40 FROM ${series}
         UNION ALL
         SELECT ${id("rcp", "i * 2 + 1")}, ${id("evt", "i")}, ${pgSource}, ${at} + i + 1, true, 40
         FROM ${series} WHERE i % 10 = 0`,
      );
    }
    await client.query("VACUUM ANALYZE events");
    await client.query("VACUUM ANALYZE receipts");
  } finally {
    await partitions.end();
    await client.end();
  }
}
