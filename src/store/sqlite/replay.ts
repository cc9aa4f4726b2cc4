import type Database from "better-sqlite3";
import { renderWhere, replayTerms } from "../core/filters.ts";
import type { ReplayPair } from "../core/replay.ts";
import type { ReplayFilter } from "../queue-types.ts";
import { prepareCreateDeliveries } from "./queue/create-deliveries.ts";
import { prepareFollowUps } from "./queue/key-queue.ts";

const eventSql = "SELECT id, source, type, ordering_key, version FROM events WHERE id = ?";
const latestSql =
  "SELECT id FROM deliveries WHERE event_id = ? AND target = ? ORDER BY id DESC LIMIT 1";

// A replay supersedes a dead original that blocks its key: otherwise the replay would wait
// behind the very delivery it replaces.
const supersedeSql = `
  UPDATE deliveries SET blocks_key = 0, updated_at = ?
  WHERE event_id = ? AND target = ? AND status = 'dead' AND blocks_key = 1`;

/** An event as replay needs it. */
export interface ReplayableEvent {
  id: string;
  source: string;
  type: string | null;
  ordering_key: string | null;
  version: number | null;
}

/**
 * Prepares replays: `one` creates, for one event, a new delivery per target flagged `is_replay`
 * and linked to the latest earlier delivery of that target; nothing existing is touched.
 * `page` reads the next page of events matching a bulk filter (oldest first, by id cursor), so a
 * bulk replay streams through the table in bounded batches.
 *
 * @example
 * ```ts
 * const replay = prepareReplay(db);
 * const ids = replay.one("evt_…", ["stripe:*"], now);
 * ```
 */
export function prepareReplay(db: Database.Database) {
  const event = db.prepare<[string], ReplayableEvent>(eventSql);
  const latest = db.prepare<[string, string], { id: string }>(latestSql);
  const supersede = db.prepare<[number, string, string]>(supersedeSql);
  const create = prepareCreateDeliveries(db);
  const follow = prepareFollowUps(db);
  const pages = new Map<string, Database.Statement<unknown[], ReplayableEvent>>();
  const replayInto = (e: ReplayableEvent, targets: readonly string[], now: number): string[] => {
    const ids = targets.map((target) => {
      const replayOf = latest.get(e.id, target)?.id ?? null;
      supersede.run(Math.floor(now), e.id, target);
      return create(
        {
          eventId: e.id,
          target,
          orderingKey: e.ordering_key,
          version: e.version,
          isReplay: true,
          replayOf,
        },
        now,
      );
    });
    if (ids.length > 0) follow.refreshEventStatus(e.id);
    return ids;
  };
  return {
    /** Returns the new delivery ids, or null when the event does not exist. */
    one(eventId: string, targets: readonly string[], now: number): string[] | null {
      const e = event.get(eventId);
      return e ? replayInto(e, targets, now) : null;
    },
    /** Replays (event, target) pairs (an event's pairs side by side); returns deliveries created. */
    pairs(pairs: ReadonlyArray<ReplayPair<ReplayableEvent>>, now: number): number {
      let created = 0;
      for (let i = 0; i < pairs.length; ) {
        const event = pairs[i]!.event;
        const targets: string[] = [];
        for (; i < pairs.length && pairs[i]!.event.id === event.id; i++)
          targets.push(pairs[i]!.target);
        created += replayInto(event, targets, now).length;
      }
      return created;
    },
    page(filter: ReplayFilter, afterId: string, limit: number): ReplayableEvent[] {
      const { where, values } = renderWhere(
        [{ sql: "id > ?", values: [afterId] }, ...replayTerms(filter)],
        () => "?",
      );
      const sql = `SELECT id, source, type, ordering_key, version FROM events ${where} ORDER BY id LIMIT ?`;
      let statement = pages.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        pages.set(sql, statement);
      }
      return statement.all(...values, limit);
    },
  };
}
