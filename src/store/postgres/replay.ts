import type pg from "pg";
import { hookinboxError } from "../../errors.ts";
import { ulid } from "../../ids.ts";
import { renderWhere, replayTerms, type WhereTerm } from "../core/filters.ts";
import { versionlessSql } from "../core/ordering.ts";
import { type ReplayOptions, replayInBatches } from "../core/replay.ts";
import type { ReplayFilter } from "../queue-types.ts";
import { withRetry, withTransaction } from "./connection.ts";
import { refreshEventsSql } from "./queue/refresh-event.ts";
import type { SchemaNames } from "./schema-names.ts";

/** A replay filter (after any leading terms) as PostgreSQL WHERE text and its values. */
const whereOf = (filter: ReplayFilter, leading: WhereTerm[] = []) =>
  renderWhere([...leading, ...replayTerms(filter)], (n) => `$${n}`);

// For each (event, target): supersede a dead original that blocks its key, then create the
// replay linked to the latest earlier delivery of that target.
const replaySql = (t: SchemaNames) => `
  WITH wanted AS (
    SELECT w.event_id, w.target, w.id FROM unnest($1::text[], $2::text[], $3::text[]) AS w (event_id, target, id)
  ), superseded AS (
    UPDATE ${t.deliveries} d SET blocks_key = false, updated_at = $4
    FROM wanted w WHERE d.event_id = w.event_id AND d.target = w.target AND d.status = 'dead' AND d.blocks_key
  ), created AS (
    INSERT INTO ${t.deliveries} (id, event_id, target, ordering_key, order_version, version, status, run_at,
                            is_replay, replay_of, created_at, updated_at)
    SELECT w.id, e.id, w.target, e.ordering_key, coalesce(e.version, ${versionlessSql}), e.version, 'pending', $4, true,
           (SELECT max(p.id) FROM ${t.deliveries} p WHERE p.event_id = e.id AND p.target = w.target), $4, $4
    FROM wanted w JOIN ${t.events} e ON e.id = w.event_id
    RETURNING id, event_id
  )
  SELECT id, event_id FROM created`;

/**
 * Replays: one event to given targets, or every event matching a filter (the batching loop is
 * core/replay.ts; each batch here is one transaction inserting its deliveries and refreshing
 * their events).
 *
 * @example
 * ```ts
 * const replay = replayPostgres(pool, schemaNames("hookinbox"), notify);
 * await replay.one("evt_…", ["stripe:*"], Date.now());
 * ```
 */
export function replayPostgres(pool: pg.Pool, t: SchemaNames, notify: () => Promise<void>) {
  const replayText = replaySql(t);
  const into = async (
    pairs: Array<{ eventId: string; target: string }>,
    now: number,
  ): Promise<string[]> => {
    if (pairs.length === 0) return [];
    const at = Math.floor(now);
    const ids = pairs.map(() => `dlv_${ulid(at)}`);
    // The new deliveries and their events' refreshed status commit together: a replay never
    // leaves a pending delivery under an event that still says done or dead.
    const rows = await withTransaction(pool, async (client) => {
      const created = await client.query(replayText, [
        pairs.map((p) => p.eventId),
        pairs.map((p) => p.target),
        ids,
        at,
      ]);
      const events = [...new Set(created.rows.map((r) => r.event_id as string))];
      await client.query(refreshEventsSql(t, "$1::text[]"), [events]);
      return created.rows;
    });
    await notify();
    return rows.map((r) => r.id as string).sort();
  };
  return {
    async one(eventId: string, targets: readonly string[], now: number): Promise<string[]> {
      const { rows } = await withRetry(() =>
        pool.query(`SELECT 1 FROM ${t.events} WHERE id = $1`, [eventId]),
      );
      if (rows.length === 0) throw hookinboxError("HOOKINBOX_EVENT_NOT_FOUND", eventId);
      return into(
        targets.map((target) => ({ eventId, target })),
        now,
      );
    },
    where: (filter: ReplayFilter, options: ReplayOptions) =>
      replayInBatches(
        {
          async page(pageFilter, afterId, limit) {
            const { where, values } = whereOf(pageFilter, [{ sql: "id > ?", values: [afterId] }]);
            const { rows } = await withRetry(() =>
              pool.query<{ id: string; source: string; type: string | null }>(
                `SELECT id, source, type FROM ${t.events} ${where} ORDER BY id LIMIT $${values.length + 1}`,
                [...values, limit],
              ),
            );
            return rows;
          },
          insert: async (pairs, now) =>
            (
              await into(
                pairs.map(({ event, target }) => ({ eventId: event.id, target })),
                now,
              )
            ).length,
        },
        filter,
        options,
      ),
  };
}
