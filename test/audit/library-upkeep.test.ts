import { afterEach, describe, expect, it } from "vitest";
import { createInbox, type Inbox } from "../../src/inbox.ts";
import { testSources } from "../helpers/signers.ts";
import { storeFactories, type TestStore } from "../helpers/stores.ts";

// A library host (createInbox + inbox.startWorker()) gets the upkeep every `hookinbox start`
// process runs: on PostgreSQL the day partitions from yesterday to a week ahead exist after it,
// so accepts never fall back to making a partition on demand. The inbox's clock is put a year
// and a half ahead, past what migration 009 made, so only the upkeep can have made them.

const day = 86_400_000;
const at = Date.UTC(2028, 5, 10, 12);
/** The UTC days from the day before `at` to a week after it, as partition suffixes. */
const days = Array.from({ length: 9 }, (_, i) =>
  new Date(at + (i - 1) * day).toISOString().slice(0, 10).replaceAll("-", ""),
);
const postgres = storeFactories().filter((f) => f.name === "postgres");

let db: TestStore | undefined;
let inbox: Inbox | undefined;
afterEach(async () => {
  await inbox?.close();
  await db?.cleanup();
  inbox = undefined;
  db = undefined;
});

/** The partitions (events and both receipt kinds) of those days that exist now. */
async function partitionsAhead(store: TestStore): Promise<string[]> {
  const names = days.flatMap((d) =>
    ["events", "receipts_accepted", "receipts_rejected"].map((p) => `${p}_p${d}`),
  );
  const rows = await store.rows<{ relname: string }>(
    `SELECT c.relname FROM pg_class c WHERE c.relname = ANY(?::text[]) ORDER BY 1`,
    [names],
  );
  return rows.map((r) => r.relname);
}

describe.each(postgres)("library-mode upkeep ($name)", ({ open }) => {
  it("inbox.startWorker() makes the partitions of the next 7 days", async () => {
    db = await open();
    inbox = createInbox({ store: db.url, sources: testSources }, { env: {}, now: () => at });
    await inbox.ready();
    expect(await partitionsAhead(db)).toEqual([]);
    inbox.startWorker();
    // Joins the sweep the worker's start began (it made the partitions first).
    expect(await inbox.upkeep().sweep()).toEqual({
      payloads: 0,
      events: 0,
      receipts: 0,
      rejected: 0,
      dedup: 0,
    });
    expect(await partitionsAhead(db)).toHaveLength(27);
    expect((await partitionsAhead(db)).filter((n) => n.startsWith("events_"))).toEqual(
      days.map((d) => `events_p${d}`),
    );
  });

  it("retention.sweep false: no sweep of its own; sweep() on demand still makes them", async () => {
    db = await open();
    inbox = createInbox(
      { store: db.url, sources: testSources, retention: { sweep: false } },
      { env: {}, now: () => at },
    );
    await inbox.ready();
    inbox.startWorker();
    expect(await partitionsAhead(db)).toEqual([]);
    await inbox.upkeep().sweep();
    expect(await partitionsAhead(db)).toHaveLength(27);
  });
});
