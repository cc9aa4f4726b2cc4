import type Database from "better-sqlite3";
import type { ClaimRow, SqliteClaimPlan } from "../../core/claim-plan.ts";

type Params = Record<string, unknown>;

/** Statements prepared once per connection, by text. */
const prepared = new WeakMap<Database.Database, Map<string, Database.Statement<[Params]>>>();

function statement(db: Database.Database, text: string): Database.Statement<[Params]> {
  let cache = prepared.get(db);
  if (!cache) {
    cache = new Map();
    prepared.set(db, cache);
  }
  let query = cache.get(text);
  if (!query) {
    query = db.prepare<[Params]>(text);
    cache.set(text, query);
  }
  return query;
}

/**
 * Runs a claim core planned (core/claim-plan.ts, SqliteClaimPlan) inside the caller's write
 * transaction, synchronously: pages of candidates, each parked or leased as its row says, an
 * attempt opened and the event read per lease. Answers the claimed rows in lease order.
 *
 * @example
 * ```ts
 * const rows = group.submit(() => runClaimPlan(db, claimPlanner((name) => name).sqlite(input)));
 * ```
 */
export function runClaimPlan(db: Database.Database, plan: SqliteClaimPlan): ClaimRow[] {
  const page = statement(db, plan.sql.page);
  const block = statement(db, plan.sql.block);
  const lease = statement(db, plan.sql.lease);
  const attempt = statement(db, plan.sql.attempt);
  const event = statement(db, plan.sql.event);
  const { limit, scan, params } = plan;
  const claimed: ClaimRow[] = [];
  let after: Params = { afterRunAt: Number.MIN_SAFE_INTEGER, afterId: "" };
  let scanned = 0;
  while (claimed.length < limit && scanned < scan.max) {
    const size = Math.min(Math.max(2 * (limit - claimed.length), scan.minPage), scan.maxPage);
    const candidates = page.all({ ...params, ...after, page: Math.min(size, scan.max - scanned) });
    if (candidates.length === 0) break;
    for (const candidate of candidates as Params[]) {
      scanned++;
      after = { afterRunAt: candidate.run_at, afterId: candidate.id };
      if (claimed.length >= limit) break;
      if (candidate.behind === 1) {
        block.run({ ...params, id: candidate.id });
        continue;
      }
      const leased = lease.get({ ...params, id: candidate.id }) as Params | undefined;
      if (!leased) continue;
      const row: Params = { ...leased, attempt_id: plan.attemptIds[claimed.length] };
      attempt.run({ ...params, ...row });
      const read = event.get(row) as Params | undefined;
      if (!read) throw new Error(`claim: event ${row.event_id} of delivery ${row.id} is missing`);
      claimed.push({ ...row, ...read });
    }
  }
  return claimed;
}
