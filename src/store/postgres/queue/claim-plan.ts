import type pg from "pg";
import type { ClaimRow, PostgresClaimPlan } from "../../core/claim-plan.ts";
import { keepsPrepared, withClient, withRetry } from "../connection.ts";
import { type InlineValue, inlineSql, queryStatements } from "../simple-query.ts";

/** Direct connections that hold a plan's prepared statements. */
const prepared = new WeakSet<pg.ClientBase>();

/**
 * The one-trip claim on a connection that keeps prepared statements: the plan's statements
 * prepared once per connection, then its message (BEGIN … COMMIT) as one simple query, each
 * statement with its own snapshot. Null where prepared statements do not survive a transaction.
 */
async function inOneTrip(
  client: pg.PoolClient,
  plan: PostgresClaimPlan,
): Promise<ClaimRow[] | null> {
  if (!plan.oneTrip || !keepsPrepared(client)) return null;
  if (!prepared.has(client)) {
    await queryStatements(client, plan.prepare);
    prepared.add(client);
  }
  const results = await queryStatements(
    client,
    plan.oneTrip.statements.map((s) => inlineSql(s.text, s.params as InlineValue[])),
  );
  return results[plan.oneTrip.rowsAt]?.rows ?? [];
}

/**
 * Runs a claim core planned (core/claim-plan.ts, PostgresClaimPlan) as one transaction on one
 * connection, retried as a whole on a transient failure: in one round trip where the connection
 * keeps prepared statements, else the lock step and (when it locked any) the lease step between
 * BEGIN and COMMIT. Answers the claimed rows in lease order.
 *
 * @example
 * ```ts
 * const rows = await runClaimPlan(pool, claimPlanner((name) => t[name]).postgres(input));
 * ```
 */
export function runClaimPlan(pool: pg.Pool, plan: PostgresClaimPlan): Promise<ClaimRow[]> {
  return withRetry(() =>
    withClient(pool, async (client) => {
      const oneTrip = await inOneTrip(client, plan);
      if (oneTrip) return oneTrip;
      await client.query("BEGIN");
      const locked = await client.query(plan.lock.text, plan.lock.params);
      const ids = locked.rows.map((r) => r.id as string);
      const leased =
        ids.length === 0
          ? []
          : (await client.query(plan.lease.text, [ids, ...plan.lease.params])).rows;
      await client.query("COMMIT");
      return leased;
    }),
  );
}
