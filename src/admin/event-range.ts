import { ulidTimePrefix } from "../ids.ts";
import { encodeCursor, listLimits } from "../store/core/paging.ts";
import type { EventSummary, Store } from "../store/types.ts";

/** Which events a stream carries: one source and one type, or all. */
export interface StreamFilter {
  readonly source?: string;
  readonly type?: string;
}

/**
 * The smallest event id made at `ms`: every real id made at or after `ms` sorts after it, every
 * one made before sorts before it (event ids are `evt_` and a ULID, time first).
 *
 * @example
 * ```ts
 * eventIdFloor(Date.parse("2026-01-01T00:00:00Z")); // "evt_01KDX…0000000000000000"
 * ```
 */
export function eventIdFloor(ms: number): string {
  return `evt_${ulidTimePrefix(ms)}${"0".repeat(16)}`;
}

/**
 * Events with `after < id < before` (no upper bound when `before` is null), oldest first: the
 * newest-first listing (`store.listEvents`, its id cursor and its source/type indexes) read
 * backwards from `before` a page of 500 at a time until it passes `after`. Memory holds the
 * summaries of that range only, so callers keep ranges short (a window, the last seconds).
 *
 * @example
 * ```ts
 * const fresh = await eventsBetween(store, { source: "stripe" }, lastSentId, null);
 * ```
 */
export async function eventsBetween(
  store: Store,
  filter: StreamFilter,
  after: string,
  before: string | null,
): Promise<EventSummary[]> {
  const found: EventSummary[] = [];
  let cursor = before === null ? undefined : encodeCursor(before);
  for (;;) {
    const page = await store.listEvents({ ...filter, limit: listLimits.max, cursor });
    for (const item of page.items) {
      if (item.id <= after) return found.reverse();
      found.push(item);
    }
    if (page.nextCursor === null) return found.reverse();
    cursor = page.nextCursor;
  }
}
