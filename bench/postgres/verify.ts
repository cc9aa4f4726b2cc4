// After a hookinbox ingest run on PostgreSQL: does the database agree with what the clients were
// told? The same identities as bench/ingest/verify-store.ts (SQLite), read from PostgreSQL.
import { readFileSync } from "node:fs";
import pg from "pg";
import type { LoadResult } from "../ingest/clients.ts";
import type { StoreCheck } from "../ingest/verify-store.ts";

/**
 * events   = unique eventIds with a 2xx + events stored for unanswered requests (0…unanswered)
 * receipts = 2xx responses               + receipts stored for unanswered requests (same bound)
 * and every acknowledged eventId is in `events`.
 */
export async function verifyPostgres(
  url: string,
  schema: string,
  loads: readonly LoadResult[],
): Promise<StoreCheck> {
  const client = new pg.Client({ connectionString: url, application_name: "hookinbox-bench" });
  await client.connect();
  let events: number;
  let receipts: number;
  let duplicateReceipts: number;
  let rejections: number;
  let stored: Set<string>;
  try {
    await client.query(`SET search_path TO ${schema}`);
    const count = async (sql: string) => Number((await client.query(sql)).rows[0].n);
    events = await count("SELECT count(*) AS n FROM events");
    receipts = await count("SELECT count(*) AS n FROM receipts WHERE event_id IS NOT NULL");
    duplicateReceipts = await count("SELECT count(*) AS n FROM receipts WHERE duplicate");
    rejections = await count("SELECT count(*) AS n FROM receipts WHERE event_id IS NULL");
    stored = new Set((await client.query("SELECT id FROM events")).rows.map((r) => r.id as string));
  } finally {
    await client.end();
  }
  const acked = new Set<string>();
  let ok2xx = 0;
  for (const load of loads) {
    for (const id of readFileSync(load.acksFile, "utf8").split("\n")) {
      if (id === "") continue;
      ok2xx++;
      acked.add(id);
    }
  }
  const missing = [...acked].filter((id) => !stored.has(id)).length;
  const unanswered = loads.reduce((n, l) => n + Math.max(0, l.sent - l.completed), 0);
  const extraEvents = events - acked.size;
  const extraReceipts = receipts - ok2xx;
  const okCounted = loads.reduce((n, l) => n + l.ok, 0);
  const pass =
    missing === 0 &&
    rejections === 0 &&
    ok2xx === okCounted &&
    extraEvents >= 0 &&
    extraEvents <= unanswered &&
    extraReceipts >= 0 &&
    extraReceipts <= unanswered;
  const summary =
    `events ${events} = ${acked.size} unique ids with 2xx + ${extraEvents} in flight at stop; ` +
    `receipts ${receipts} = ${ok2xx} 2xx + ${extraReceipts} in flight at stop ` +
    `(${unanswered} unanswered); 2xx ids missing from store: ${missing}; rejections: ${rejections}`;
  return {
    events,
    receipts,
    duplicateReceipts,
    rejections,
    ok2xx,
    ackedEvents: acked.size,
    missing,
    unanswered,
    pass,
    summary,
  };
}
