// After a hookinbox ingest run on PostgreSQL: does the database agree with what the clients were
// told? The same identities as bench/ingest/verify-store.ts (SQLite), read from PostgreSQL.
import pg from "pg";
import type { LoadResult } from "../ingest/clients.ts";
import { compareWithAcks, type StoreCheck } from "../ingest/verify-store.ts";

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
  return compareWithAcks({ events, receipts, duplicateReceipts, rejections, stored }, loads);
}
