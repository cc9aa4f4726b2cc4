import type pg from "pg";
import { foldTarget } from "../alert-fold.ts";
import type { AlertOccurrence, AlertOutboxStore } from "../alert-types.ts";
import { withTransaction } from "./connection.ts";
import type { SchemaNames } from "./schema-names.ts";

/**
 * The alert outbox's recording on PostgreSQL: it takes a transaction-scoped advisory lock per
 * condition, so processes folding the same condition at once make one alert, not two. Claiming,
 * settling and pruning alerts are core's (core/alert-writes.ts).
 *
 * @example
 * ```ts
 * const outbox = alertOutboxPostgres(pool, schemaNames("hookinbox"));
 * await outbox.claimDueAlerts(Date.now(), 10, 120_000);
 * ```
 */
export function alertOutboxPostgres(
  pool: pg.Pool,
  t: SchemaNames,
): Pick<AlertOutboxStore, "recordAlerts"> {
  return {
    async recordAlerts(occurrences, input) {
      await withTransaction(pool, (client) => recordAlertsIn(client, t, occurrences, input));
    },
  };
}

/**
 * Records occurrences inside the caller's transaction (see AlertOutboxStore.recordAlerts): the
 * state changes that alert (a held effect, a disabled destination) call it in their own, so the
 * alert commits with the change.
 *
 * @example
 * ```ts
 * await withTransaction(pool, (client) => recordAlertsIn(client, t, occurrences, { now, windowMs }));
 * ```
 */
export async function recordAlertsIn(
  client: pg.PoolClient,
  t: SchemaNames,
  occurrences: readonly AlertOccurrence[],
  input: { now: number; windowMs: number },
): Promise<void> {
  const now = Math.floor(input.now);
  // One dead letter may have an occurrence per sink (webhook, function): marked once for all.
  const marked = new Map<string, boolean>();
  for (const occurrence of occurrences) {
    const deadLetterId = occurrence.deadLetterId;
    if (deadLetterId !== undefined) {
      if (!marked.has(deadLetterId)) {
        // Row-locked: a second process marking the same dead letter waits, then sees it marked.
        const result = await client.query(
          `UPDATE ${t.deliveries} SET alerted_at = $2
           WHERE id = $1 AND status = 'dead' AND alerted_at IS NULL`,
          [deadLetterId, now],
        );
        marked.set(deadLetterId, result.rowCount === 1);
      }
      if (!marked.get(deadLetterId)) continue;
    }
    const payload = JSON.stringify(occurrence.payload);
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
      `hookinbox-alert:${occurrence.condition}`,
    ]);
    const { rows } = await client.query<{ waiting: string | null; slot: string | null }>(
      `SELECT (SELECT id FROM ${t.alert_outbox} WHERE condition = $1 AND attempts = 0
                 AND delivered_at IS NULL AND slot_at > $2 ORDER BY slot_at DESC LIMIT 1) AS waiting,
              (SELECT max(slot_at) FROM ${t.alert_outbox} WHERE condition = $1)::text AS slot`,
      [occurrence.condition, now],
    );
    const row = rows[0];
    const target = foldTarget({
      waiting: row?.waiting ?? null,
      lastSlot: row?.slot == null ? null : Number(row.slot),
      now,
      windowMs: input.windowMs,
    });
    if ("foldInto" in target) {
      await client.query(
        `UPDATE ${t.alert_outbox} SET count = count + 1, payload = $2, last_at = $3 WHERE id = $1`,
        [target.foldInto, payload, now],
      );
    } else {
      await client.query(
        `INSERT INTO ${t.alert_outbox} (id, condition, kind, payload, created_at, last_at, slot_at, due_at)
         VALUES ($1, $2, $3, $4, $5, $5, $6, $6)`,
        [target.id, occurrence.condition, occurrence.kind, payload, now, target.newSlot],
      );
    }
  }
}
