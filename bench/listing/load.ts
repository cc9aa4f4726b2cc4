// Bulk loading for bench:listing: N events (and one receipt each, every 10th event with a
// duplicate receipt) written with one SQL statement per table, straight into a migrated store.
// Ids are "evt_" + 26 decimal digits: valid cursors, sorting like the ULIDs the store mints.
import Database from "better-sqlite3";
import pg from "pg";

/** The shape of the loaded data, so scenarios know what exists. */
export const shape = {
  sources: ["stripe", "github", "shopify", "std"],
  types: 20,
  /** Every 100th event is dead, every 50th pending, the rest done. */
  statuses: "done / pending (1 in 50) / dead (1 in 100)",
} as const;

const day = 86_400_000;

/** Loads `count` events into the SQLite file at `path` (already migrated). */
export function loadSqlite(path: string, count: number, now: number): void {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  const start = now - 30 * day;
  const step = (30 * day) / count;
  db.transaction(() => {
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @count)
       INSERT INTO events (id, source, dedup_key, type, status, received_at, body, headers)
       SELECT printf('evt_%026d', i),
              CASE i % 4 WHEN 0 THEN 'stripe' WHEN 1 THEN 'github' WHEN 2 THEN 'shopify' ELSE 'std' END,
              printf('evt_provider_%d', i),
              printf('type.%d', i % 20),
              CASE WHEN i % 100 = 0 THEN 'dead' WHEN i % 50 = 0 THEN 'pending' ELSE 'done' END,
              CAST(@start + i * @step AS INTEGER),
              CAST(printf('{"id":"evt_provider_%d","type":"type.%d"}', i, i % 20) AS BLOB),
              '[["content-type","application/json"]]'
       FROM n`,
    ).run({ count, start, step });
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @count)
       INSERT INTO receipts (id, event_id, source, received_at, duplicate, size)
       SELECT printf('rcp_%026d', i * 2), printf('evt_%026d', i),
              CASE i % 4 WHEN 0 THEN 'stripe' WHEN 1 THEN 'github' WHEN 2 THEN 'shopify' ELSE 'std' END,
              CAST(@start + i * @step AS INTEGER), 0, 40
       FROM n`,
    ).run({ count, start, step });
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i + 10 FROM n WHERE i + 10 <= @count)
       INSERT INTO receipts (id, event_id, source, received_at, duplicate, size)
       SELECT printf('rcp_%026d', i * 2 + 1), printf('evt_%026d', i),
              CASE i % 4 WHEN 0 THEN 'stripe' WHEN 1 THEN 'github' WHEN 2 THEN 'shopify' ELSE 'std' END,
              CAST(@start + i * @step + 60000 AS INTEGER), 1, 40
       FROM n`,
    ).run({ count, start, step });
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
  await client.connect();
  try {
    const start = now - 30 * day;
    const step = (30 * day) / count;
    await client.query(`SET search_path = ${schema}`);
    const source = `(ARRAY['stripe','github','shopify','std'])[(i % 4) + 1]`;
    await client.query(
      `INSERT INTO events (id, source, dedup_key, type, status, received_at, body, headers)
       SELECT 'evt_' || lpad(i::text, 26, '0'), ${source}, 'evt_provider_' || i, 'type.' || (i % 20),
              CASE WHEN i % 100 = 0 THEN 'dead' WHEN i % 50 = 0 THEN 'pending' ELSE 'done' END,
              ($2::float8 + i * $3::float8)::bigint,
              convert_to('{"id":"evt_provider_' || i || '","type":"type.' || (i % 20) || '"}', 'UTF8'),
              '[["content-type","application/json"]]'::jsonb
       FROM generate_series(1, $1::int) AS i`,
      [count, start, step],
    );
    await client.query(
      `INSERT INTO receipts (id, event_id, source, received_at, duplicate, size)
       SELECT 'rcp_' || lpad((i * 2)::text, 26, '0'), 'evt_' || lpad(i::text, 26, '0'), ${source},
              ($2::float8 + i * $3::float8)::bigint, false, 40
       FROM generate_series(1, $1::int) AS i
       UNION ALL
       SELECT 'rcp_' || lpad((i * 2 + 1)::text, 26, '0'), 'evt_' || lpad(i::text, 26, '0'), ${source},
              ($2::float8 + i * $3::float8 + 60000)::bigint, true, 40
       FROM generate_series(10, $1::int, 10) AS i`,
      [count, start, step],
    );
    await client.query("VACUUM ANALYZE events");
    await client.query("VACUUM ANALYZE receipts");
  } finally {
    await client.end();
  }
}
