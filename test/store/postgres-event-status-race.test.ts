// An event's status when its deliveries end at the same moment on PostgreSQL. Each delivery's end
// statement derives the event's status from its deliveries with the snapshot it started with, so
// two deliveries of one event ending at once in two statements each see the other still running
// and leave the event `pending` (read committed; 84 of 100 events in the first repro). Each test
// here ends the two deliveries of 100 events at once from two pools, as two workers would, one
// end path at a time, and asserts the status of every event.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import type { ClaimedDelivery, CompleteInput } from "../../src/store/queue-types.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { schemaPool } from "../helpers/stores.ts";
import { acceptInput } from "./conformance.ts";

const EVENTS = 100;

let database: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  await database.cleanup();
});

type Store = ReturnType<typeof openPostgresStore>;

/** Two stores on a fresh schema, 100 events to targets a and b, every delivery claimed. */
async function claimedPairs(keyed: boolean) {
  const url = database.schemaUrl();
  const stores: [Store, Store] = [openPostgresStore(url), openPostgresStore(url)];
  await stores[0].migrate();
  const at = Date.now();
  for (let i = 0; i < EVENTS; i++)
    await stores[0].accept(
      acceptInput({
        identity: {
          dedupKey: `evt_race_${i}`,
          orderingKey: keyed ? `key_${i}` : null,
          version: null,
        },
        receivedAt: at + i,
        targets: ["a", "b"],
      }),
    );
  const claimed = await stores[0].claimDeliveries({
    workerId: "w",
    limit: 2 * EVENTS,
    leaseMs: 60_000,
    // Every event is due: the last was received at `at + EVENTS - 1`, which a fast run of the
    // accepts above has not reached yet.
    now: Math.max(Date.now(), at + EVENTS),
  });
  expect(claimed).toHaveLength(2 * EVENTS);
  const ending = (d: ClaimedDelivery): CompleteInput => ({
    deliveryId: d.id,
    workerId: "w",
    attempt: d.attempt,
    now: Date.now(),
    orderingKey: d.orderingKey,
    eventId: d.eventId,
  });
  const byTarget = (target: string) =>
    claimed.filter((d) => d.target === target).map((d) => ending(d));
  return { url, stores, a: byTarget("a"), b: byTarget("b") };
}

/** How many events of the schema have each status. */
async function statuses(url: string): Promise<Record<string, number>> {
  const pool = schemaPool(url, 1);
  try {
    const { rows } = await pool.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM events GROUP BY status",
    );
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  } finally {
    await pool.end();
  }
}

/**
 * Ends a[i] on the first store and b[i] on the second, all at once. A third connection holds
 * every delivery row locked while the end statements start, so each takes its snapshot while
 * both deliveries of every event are still running, and waits; then it lets them all go. Without
 * that, a statement that happens to start after the other's commit sees it, and the race is luck.
 */
async function endTogether(
  url: string,
  stores: [Store, Store],
  a: CompleteInput[],
  b: CompleteInput[],
  endA: (store: Store, input: CompleteInput) => Promise<unknown>,
  endB: (store: Store, input: CompleteInput) => Promise<unknown>,
) {
  const pool = schemaPool(url, 2);
  const holder = await pool.connect();
  try {
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM deliveries FOR UPDATE");
    const ending = Promise.all(
      a.flatMap((input, i) => [endA(stores[0], input), endB(stores[1], b[i] as CompleteInput)]),
    );
    // Until the statements that started are all waiting for the rows (the same count three
    // polls in a row), then release them.
    const seen: number[] = [];
    while (seen.length < 3 || seen.at(-1) === 0 || new Set(seen.slice(-3)).size !== 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
        [(holder as unknown as { processID: number }).processID],
      );
      seen.push(rows[0]?.n ?? 0);
    }
    expect(seen.at(-1)).toBeGreaterThanOrEqual(2);
    await holder.query("ROLLBACK");
    await ending;
  } finally {
    holder.release();
    await pool.end();
  }
}

const dead = (input: CompleteInput) => ({
  ...input,
  error: { message: "gone", stack: null },
  retryAt: null,
  outcome: "permanent" as const,
  blockKey: false,
});

describe("an event's status when its two deliveries end at once on PostgreSQL", () => {
  for (const keyed of [false, true]) {
    const kind = keyed ? "with ordering keys" : "without ordering keys";
    it(`${kind}: both done → every one of the 100 events done`, async () => {
      const { url, stores, a, b } = await claimedPairs(keyed);
      try {
        const complete = (store: Store, input: CompleteInput) => store.completeDelivery(input);
        await endTogether(url, stores, a, b, complete, complete);
        expect(await statuses(url)).toEqual({ done: EVENTS });
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    it(`${kind}: one done, one dead-lettered → every one of the 100 events dead`, async () => {
      const { url, stores, a, b } = await claimedPairs(keyed);
      try {
        await endTogether(
          url,
          stores,
          a,
          b,
          (store, input) => store.completeDelivery(input),
          (store, input) => store.failDelivery(dead(input)),
        );
        expect(await statuses(url)).toEqual({ dead: EVENTS });
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });
  }

  it("both done with handler SQL in each delivery's transaction → every event done, 200 rows written", async () => {
    const { url, stores, a, b } = await claimedPairs(false);
    try {
      const pool = schemaPool(url, 1);
      await pool.query("CREATE TABLE effects_race (delivery_id text PRIMARY KEY)");
      const complete = (store: Store, input: CompleteInput) =>
        store.completeDelivery(input, (tx) =>
          tx.query("INSERT INTO effects_race VALUES ($1)", [input.deliveryId]),
        );
      await endTogether(url, stores, a, b, complete, complete);
      expect(await statuses(url)).toEqual({ done: EVENTS });
      const { rows } = await pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM effects_race",
      );
      await pool.end();
      expect(rows[0]?.n).toBe(2 * EVENTS);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});
