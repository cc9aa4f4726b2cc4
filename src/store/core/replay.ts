import type { ReplayFilter } from "../queue-types.ts";

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
