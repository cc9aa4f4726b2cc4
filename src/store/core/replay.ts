import { hookinboxError } from "../../errors.ts";
import { ulid } from "../../ids.ts";
import type { QueueStore, ReplayFilter } from "../queue-types.ts";
import { renderWhere, replayTerms } from "./filters.ts";
import { versionlessSql } from "./ordering.ts";
import { eventStatusSql } from "./queue-rules.ts";
import { bindText, type ReadDriver, rowsOf } from "./read-driver.ts";
import { inList, listValue, type SqlStatement } from "./sql-template.ts";
import type { WriteDriver } from "./write-driver.ts";

/** How many events one bulk-replay batch reads and replays (one commit each). */
export const replayBatchSize = 500;

/** The least an event must carry for bulk replay: its id (the cursor) and what routing reads. */
export interface ReplayPageEvent {
  readonly id: string;
  readonly source: string;
  readonly type: string | null;
}

/** One delivery a replay creates: an event and one of its targets. */
export interface ReplayPair<E extends ReplayPageEvent> {
  readonly event: E;
  readonly target: string;
}

/**
 * The two things a driver does for bulk replay; the loop around them is `replayInBatches`.
 * `page` reads up to `limit` events matching the filter with ids after `afterId`, oldest first.
 * `insert` creates one replay delivery per pair and refreshes those events' status in the same
 * transaction, resolving to the number of deliveries created.
 */
export interface ReplayDriver<E extends ReplayPageEvent> {
  page(filter: ReplayFilter, afterId: string, limit: number): Promise<readonly E[]>;
  insert(pairs: ReadonlyArray<ReplayPair<E>>, now: number): Promise<number>;
}

/** What `replayInBatches` needs besides the driver: the Store's `replayWhere` options. */
export interface ReplayOptions {
  readonly now: number;
  /** The targets for one event (routing lives outside the store). */
  readonly targetsFor: (event: { source: string; type: string | null }) => readonly string[];
  /** Called after each batch with the events replayed so far. */
  readonly onProgress?: (eventsDone: number) => void;
}

/**
 * Replays every event matching `filter`, written once for both drivers: pages of
 * `replayBatchSize` events by id cursor (a bulk replay never loads the table), each page's
 * (event, target) pairs inserted in one driver transaction, progress reported per page. A page
 * whose events route nowhere inserts nothing.
 *
 * @example
 * ```ts
 * const { events, deliveries } = await replayInBatches(
 *   { page: (filter, afterId, limit) => readPage(filter, afterId, limit), insert: insertReplays },
 *   { source: "stripe" },
 *   { now: Date.now(), targetsFor: () => ["stripe:*"], onProgress: (done) => console.log(done) },
 * );
 * ```
 */
export async function replayInBatches<E extends ReplayPageEvent>(
  driver: ReplayDriver<E>,
  filter: ReplayFilter,
  options: ReplayOptions,
): Promise<{ events: number; deliveries: number }> {
  let afterId = "";
  let events = 0;
  let deliveries = 0;
  for (;;) {
    const page = await driver.page(filter, afterId, replayBatchSize);
    if (page.length === 0) break;
    const pairs = page.flatMap((event) =>
      options.targetsFor(event).map((target) => ({ event, target })),
    );
    if (pairs.length > 0) deliveries += await driver.insert(pairs, options.now);
    events += page.length;
    afterId = page[page.length - 1]!.id;
    options.onProgress?.(events);
  }
  return { events, deliveries };
}

/**
 * What core's replays run on: a driver's reads and writes (one `execute` is one transaction),
 * and a wake-up for workers once new deliveries committed (PostgreSQL's NOTIFY; nothing on
 * SQLite, whose workers share the process).
 */
export interface ReplayStoreDriver extends ReadDriver, WriteDriver {
  notifyDeliveries(): Promise<void>;
}

/**
 * The statements that replay (event, target, new delivery id) triples in one transaction: a dead
 * original that blocks its key is superseded (otherwise the replay would wait behind the very
 * delivery it replaces), then one pending delivery per triple is created, flagged `is_replay` and
 * linked to the latest earlier delivery of that target (an event that no longer exists gets
 * none), and the events' status is derived again, so a replay never leaves a pending delivery
 * under an event that still says done or dead. The insert returns the ids it created.
 *
 * @example
 * ```ts
 * const statements = replayStatements(driver, [{ eventId: "evt_…", target: "stripe:*", id: "dlv_…" }], Date.now());
 * const [, created] = await driver.execute(statements);
 * ```
 */
export function replayStatements(
  driver: Pick<WriteDriver, "dialect" | "table">,
  triples: ReadonlyArray<{ eventId: string; target: string; id: string }>,
  now: number,
): SqlStatement[] {
  const { dialect } = driver;
  const deliveries = driver.table("deliveries");
  const events = driver.table("events");
  const at = Math.floor(now);
  const pg = dialect === "postgres";
  const [yes, no] = pg ? ["true", "false"] : ["1", "0"];
  const wanted = pg
    ? "SELECT event_id, target, id FROM unnest(?::text[], ?::text[], ?::text[]) AS w (event_id, target, id)"
    : `SELECT json_extract(value, '$[0]') AS event_id, json_extract(value, '$[1]') AS target,
              json_extract(value, '$[2]') AS id FROM json_each(?)`;
  const wantedParams = pg
    ? [triples.map((w) => w.eventId), triples.map((w) => w.target), triples.map((w) => w.id)]
    : [JSON.stringify(triples.map((w) => [w.eventId, w.target, w.id]))];
  const eventIds = [...new Set(triples.map((w) => w.eventId))];
  const next = eventStatusSql(dialect, { deliveries, event: "ev.id" });
  return [
    bindText(
      dialect,
      `UPDATE ${deliveries} AS d SET blocks_key = ${no}, updated_at = ?
       WHERE d.status = 'dead' AND d.blocks_key = ${yes} AND ${inList(dialect, "d.event_id")}
         AND EXISTS (SELECT 1 FROM (${wanted}) w WHERE w.event_id = d.event_id AND w.target = d.target)`,
      [at, listValue(dialect, eventIds), ...wantedParams],
    ),
    bindText(
      dialect,
      `INSERT INTO ${deliveries} (id, event_id, target, ordering_key, order_version, version, status,
                                  run_at, is_replay, replay_of, created_at, updated_at)
       SELECT w.id, e.id, w.target, e.ordering_key, coalesce(e.version, ${versionlessSql}), e.version,
              'pending', ?, ${yes},
              (SELECT max(p.id) FROM ${deliveries} p WHERE p.event_id = e.id AND p.target = w.target),
              ?, ?
       FROM (${wanted}) w JOIN ${events} e ON e.id = w.event_id
       RETURNING id`,
      [at, at, at, ...wantedParams],
    ),
    bindText(
      dialect,
      `UPDATE ${events} AS ev SET status = ${next}
       WHERE ${inList(dialect, "ev.id")} AND ev.status <> ${next}`,
      [listValue(dialect, eventIds)],
    ),
  ];
}

/**
 * The Store's replays, written once over a driver's reads and writes: `replayEvent` creates, for
 * one event, a new delivery per target (flagged `is_replay`, linked to the latest earlier
 * delivery of that target, nothing existing touched) and reads them back; `replayWhere` streams a
 * bulk filter through `replayInBatches`, each page one transaction. `deliveryById` is core's read.
 *
 * @example
 * ```ts
 * const replays = storeReplays({ ...reads, execute, notifyDeliveries: async () => {} }, core.deliveryById);
 * await replays.replayEvent({ eventId: "evt_…", targets: ["stripe:*"], now: Date.now() });
 * ```
 */
export function storeReplays(
  driver: ReplayStoreDriver,
  deliveryById: QueueStore["deliveryById"],
): Pick<QueueStore, "replayEvent" | "replayWhere"> {
  const events = driver.table("events");
  /** Replays the pairs in one transaction; answers the created delivery ids, oldest first. */
  const insert = async (
    pairs: ReadonlyArray<{ eventId: string; target: string }>,
    now: number,
  ): Promise<string[]> => {
    if (pairs.length === 0) return [];
    const at = Math.floor(now);
    const triples = pairs.map((p) => ({ ...p, id: `dlv_${ulid(at)}` }));
    const [, created] = await driver.execute(replayStatements(driver, triples, at));
    const ids = (created?.rows ?? []).map((row) => (row as { id: string }).id).sort();
    if (ids.length > 0) await driver.notifyDeliveries();
    return ids;
  };
  return {
    async replayEvent(input) {
      const found = await rowsOf(driver, `SELECT id FROM ${events} WHERE id = ?`, [input.eventId]);
      if (found.length === 0) throw hookinboxError("HOOKINBOX_EVENT_NOT_FOUND", input.eventId);
      const ids = await insert(
        input.targets.map((target) => ({ eventId: input.eventId, target })),
        input.now,
      );
      return Promise.all(ids.map(async (id) => (await deliveryById(id))!));
    },
    replayWhere: (filter, options) =>
      // Bounded batches, each its own commit: a bulk replay never loads the table.
      replayInBatches(
        {
          page(pageFilter, afterId, limit) {
            const { where, values } = renderWhere(
              [{ sql: "id > ?", values: [afterId] }, ...replayTerms(pageFilter)],
              () => "?",
            );
            return rowsOf<ReplayPageEvent>(
              driver,
              `SELECT id, source, type FROM ${events} ${where} ORDER BY id LIMIT ?`,
              [...values, limit],
            );
          },
          insert: async (pairs, now) =>
            (
              await insert(
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
