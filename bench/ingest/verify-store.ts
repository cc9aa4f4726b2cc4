// After a hookinbox run: does the SQLite file agree with what the clients were told?
import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import type { LoadResult } from "./clients.ts";

export interface StoreCheck {
  readonly events: number;
  readonly receipts: number; // accepted receipts (event_id set): stored + duplicate deliveries
  readonly duplicateReceipts: number;
  readonly rejections: number; // receipts without an event (bad signature, …): must be 0
  readonly ok2xx: number; // 2xx responses the clients received
  readonly ackedEvents: number; // distinct eventIds in those 2xx = unique ids that got a 2xx
  readonly missing: number; // eventIds acknowledged with a 2xx but absent from the store: must be 0
  /** Requests a client sent but never got an answer to (wrk stops mid-flight: ≤ 50 per run). */
  readonly unanswered: number;
  readonly pass: boolean;
  readonly summary: string;
}

/**
 * Opens the store read-only. The gateway may commit requests whose answer wrk never read
 * (wrk drops in-flight requests when its duration ends), so the identities checked are:
 *   events   = ackedEvents + (events stored for unanswered requests), 0 ≤ that ≤ unanswered
 *   receipts = ok2xx       + (receipts stored for unanswered requests), same bound
 * and every acknowledged eventId must be in the store.
 */
export function verifyStore(dbPath: string, loads: readonly LoadResult[]): StoreCheck {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  const count = (sql: string) => db.prepare<[], number>(sql).pluck().get() ?? 0;
  const events = count("SELECT count(*) FROM events");
  const receipts = count("SELECT count(*) FROM receipts WHERE event_id IS NOT NULL");
  const duplicateReceipts = count("SELECT count(*) FROM receipts WHERE duplicate = 1");
  const rejections = count("SELECT count(*) FROM receipts WHERE event_id IS NULL");
  const stored = new Set(db.prepare<[], string>("SELECT id FROM events").pluck().all());
  db.close();

  return compareWithAcks({ events, receipts, duplicateReceipts, rejections, stored }, loads);
}

/** What a store holds after a run, as both stores' checks read it. */
export interface StoredCounts {
  readonly events: number;
  readonly receipts: number;
  readonly duplicateReceipts: number;
  readonly rejections: number;
  readonly stored: ReadonlySet<string>;
}

/**
 * Compares a store's counts with the eventIds the clients saw acknowledged (shared by the SQLite
 * and PostgreSQL benches).
 */
export function compareWithAcks(counts: StoredCounts, loads: readonly LoadResult[]): StoreCheck {
  const { events, receipts, duplicateReceipts, rejections, stored } = counts;
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

/** SQLite's version as compiled into better-sqlite3 (what the gateway runs). */
export function sqliteVersion(): string {
  const db = new Database(":memory:");
  const version = db.prepare<[], string>("SELECT sqlite_version()").pluck().get() ?? "?";
  db.close();
  return version;
}
