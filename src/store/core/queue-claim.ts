import type { DestinationStore } from "../forward-types.ts";
import type { ClaimedDelivery, QueueStore } from "../queue-types.ts";
import { type ClaimDriver, type ClaimRow, claimPlanner } from "./claim-plan.ts";
import { inList, listValue, type SqlDialect } from "./sql-template.ts";
import { executeText } from "./write-driver.ts";

/**
 * The claim and lease Store methods core implements (drivers leave them out).
 *
 * @example
 * ```ts
 * const methods: CoreClaims[] = ["claimDeliveries", "releaseDeliveries", "rescueExpiredLeases"];
 * ```
 */
export type CoreClaims = "claimDeliveries" | "releaseDeliveries" | "rescueExpiredLeases";

/**
 * Hands claimed deliveries back unrun, held by `workerId`: pending again, their attempt undone
 * (the count and the attempt row). A release makes them due at once; a deferral (`deferral`)
 * makes them due at its `runAt`, or, postponed by the circuit breaker (its `circuit` flag), marks
 * each to wait for its destination's circuit unless that circuit is closed by now (a close that
 * committed after the caller looked: then due at once, unmarked). One statement on PostgreSQL;
 * on SQLite (no writes inside a WITH) the attempts go first, then the deliveries, in one
 * transaction; either way the last statement's count is how many were handed back.
 */
function unclaimStatements(
  driver: ClaimDriver,
  input: { workerId: string; ids: readonly string[]; now: number },
  deferral?: { runAt: number; circuit: boolean },
): Array<[string, unknown[]]> {
  const { dialect } = driver;
  const deliveries = driver.table("deliveries");
  const attempts = driver.table("attempts");
  const now = Math.floor(input.now);
  const flag = dialect === "postgres" ? "?::boolean" : "? = 1";
  const open = `EXISTS (SELECT 1 FROM ${driver.table("destinations")} x
                        WHERE x.name = d.target AND x.open_until IS NOT NULL)`;
  const circuit = deferral?.circuit ? 1 : 0;
  const [runAt, runAtParams] = deferral
    ? [
        `run_at = CASE WHEN ${flag} AND NOT ${open} THEN CAST(? AS BIGINT) ELSE CAST(? AS BIGINT) END,
         circuit_wait = ${flag} AND ${open}`,
        [circuit, now, Math.floor(deferral.runAt), circuit],
      ]
    : ["run_at = ?", [now]];
  const held = `${inList(dialect, "id")} AND status = 'running' AND lease_owner = ?`;
  const heldParams = [listValue(dialect, input.ids), input.workerId];
  const update = `UPDATE ${deliveries} AS d
    SET status = 'pending', attempts = attempts - 1, lease_owner = NULL, lease_expires_at = NULL,
        updated_at = ?, ${runAt}
    WHERE ${held}`;
  const params = [now, ...runAtParams, ...heldParams];
  if (dialect === "postgres") {
    return [
      [
        `WITH unclaimed AS (${update} RETURNING id, attempts + 1 AS attempt
         ), dropped AS (
           DELETE FROM ${attempts} a USING unclaimed u WHERE a.delivery_id = u.id AND a.attempt = u.attempt
         )
         SELECT count(*)::int AS n FROM unclaimed`,
        params,
      ],
    ];
  }
  return [
    [
      `DELETE FROM ${attempts} WHERE (delivery_id, attempt) IN (
         SELECT id, attempts FROM ${deliveries} WHERE ${held})`,
      heldParams,
    ],
    [update, params],
  ];
}

/** How many rows the last of `statements` handed back (PostgreSQL: its `n`; SQLite: changed). */
async function unclaimed(
  driver: ClaimDriver,
  statements: Array<[string, unknown[]]>,
): Promise<number> {
  const results = await executeText(driver, statements);
  const last = results[results.length - 1];
  return driver.dialect === "postgres" ? Number(last?.rows[0]?.n ?? 0) : (last?.rowCount ?? 0);
}

/**
 * Leases that expired before `now` go back to pending, their running attempt ended as
 * `lease-expired` (a lease is valid through its expiry ms); the last statement counts them.
 */
function rescueStatements(driver: ClaimDriver, now: number): Array<[string, unknown[]]> {
  const deliveries = driver.table("deliveries");
  const attempts = driver.table("attempts");
  const expire = `SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL, run_at = ?,
      last_error = 'lease expired (worker crashed or stalled)', updated_at = ?
    WHERE status = 'running' AND lease_expires_at < ?`;
  const ended = "ended_at = ?, outcome = 'lease-expired', error_message = 'lease expired'";
  if (driver.dialect === "postgres") {
    return [
      [
        `WITH expired AS (UPDATE ${deliveries} ${expire} RETURNING id, attempts
         ), ended AS (
           UPDATE ${attempts} a SET ${ended}
           FROM expired e WHERE a.delivery_id = e.id AND a.attempt = e.attempts AND a.outcome = 'running'
         )
         SELECT count(*)::int AS n FROM expired`,
        [now, now, now, now],
      ],
    ];
  }
  return [
    [
      `UPDATE ${attempts} SET ${ended} WHERE outcome = 'running' AND delivery_id IN (
         SELECT id FROM ${deliveries} WHERE status = 'running' AND lease_expires_at < ?)`,
      [now, now],
    ],
    [`UPDATE ${deliveries} ${expire}`, [now, now, now]],
  ];
}

/** A byte column as a Uint8Array over the same bytes (a Buffer, or what crossed a thread). */
const bytes = (value: unknown) => {
  const view = value as Uint8Array;
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
};

/** A claimed row, as either store returns it (SQLite's booleans 0/1 and JSON text), read once. */
function claimedOf(dialect: SqlDialect, r: ClaimRow): ClaimedDelivery {
  const attempt = Number(r.attempt);
  return {
    id: r.id as string,
    eventId: r.event_id as string,
    target: r.target as string,
    attempt,
    budgetAttempt: attempt - Number(r.budget_base),
    attemptId: r.attempt_id as string,
    leaseExpiresAt: Number(r.lease_expires_at),
    isReplay: r.is_replay === true || r.is_replay === 1,
    replayOf: r.replay_of as string | null,
    source: r.source as string,
    dedupKey: r.dedup_key as string,
    type: r.type as string | null,
    orderingKey: r.ordering_key as string | null,
    version: r.version as number | null,
    occurredAt: r.occurred_at as number | null,
    body: bytes(r.body),
    headers: (dialect === "sqlite" ? JSON.parse(r.headers as string) : r.headers) as Array<
      [string, string]
    >,
    runAt: r.run_at as number,
    traceparent: r.traceparent as string | null,
    appliedVersion: r.applied_version as number | null,
  };
}

/**
 * The claim and the lease hand-backs, once for both stores: `claimDeliveries` leases up to
 * `limit` due deliveries, each the head of its ordering key with nothing in flight (deliveries
 * with something ahead are parked as `blocked`, woken when it ends), each for its target's own
 * lease else `leaseMs`, as one transaction the driver runs from core's plan (claim-plan.ts);
 * `releaseDeliveries` hands unstarted claims back uncounted, `deferDeliveries` postpones them
 * (a destination's limits or its circuit), `rescueExpiredLeases` returns expired leases to
 * pending, each over the driver's `execute`.
 *
 * @example
 * ```ts
 * const claims = storeClaims(driver);
 * const claimed = await claims.claimDeliveries({ workerId: "w1", limit: 10, leaseMs: 30_000, now: Date.now() });
 * await claims.releaseDeliveries("w1", claimed.map((d) => d.id), Date.now());
 * ```
 */
export function storeClaims(
  driver: ClaimDriver,
): Pick<QueueStore, CoreClaims> & Pick<DestinationStore, "deferDeliveries"> {
  const planner = claimPlanner(driver.table);
  return {
    async claimDeliveries(input) {
      const rows =
        driver.dialect === "sqlite"
          ? await driver.runClaimPlan(planner.sqlite(input))
          : await driver.runClaimPlan(planner.postgres(input));
      return rows.map((row) => claimedOf(driver.dialect, row));
    },
    async releaseDeliveries(workerId, ids, now) {
      if (ids.length === 0) return 0;
      return unclaimed(driver, unclaimStatements(driver, { workerId, ids, now }));
    },
    async deferDeliveries(workerId, ids, runAt, now, circuit = false) {
      if (ids.length === 0) return 0;
      return unclaimed(
        driver,
        unclaimStatements(driver, { workerId, ids, now }, { runAt, circuit }),
      );
    },
    async rescueExpiredLeases(now) {
      return unclaimed(driver, rescueStatements(driver, Math.floor(now)));
    },
  };
}
