import { describe, expect, it } from "vitest";
import type { ReplayFilter } from "../queue-types.ts";
import { type ReplayPair, replayBatchSize, replayInBatches } from "./replay.ts";

interface Row {
  id: string;
  source: string;
  type: string | null;
}

/** An events table as an array, and every call the loop makes. */
function table(count: number) {
  const rows: Row[] = Array.from({ length: count }, (_, i) => ({
    id: `evt_${String(i).padStart(5, "0")}`,
    source: i % 2 === 0 ? "stripe" : "github",
    type: null,
  }));
  const pages: Array<{ filter: ReplayFilter; afterId: string; limit: number }> = [];
  const inserts: Array<{ pairs: ReadonlyArray<ReplayPair<Row>>; now: number }> = [];
  const driver = {
    async page(filter: ReplayFilter, afterId: string, limit: number) {
      pages.push({ filter, afterId, limit });
      return rows
        .filter(
          (r) => r.id > afterId && (filter.source === undefined || r.source === filter.source),
        )
        .slice(0, limit);
    },
    async insert(pairs: ReadonlyArray<ReplayPair<Row>>, now: number) {
      inserts.push({ pairs, now });
      return pairs.length;
    },
  };
  return { driver, pages, inserts };
}

describe("replayInBatches: the bulk replay loop, once for both drivers", () => {
  it("pages by id cursor in batches of 500 and inserts each page's pairs once", async () => {
    const { driver, pages, inserts } = table(1_001);
    const progress: number[] = [];
    const result = await replayInBatches(
      driver,
      {},
      { now: 7, targetsFor: () => ["a", "b"], onProgress: (done) => progress.push(done) },
    );
    expect(result).toEqual({ events: 1_001, deliveries: 2_002 });
    expect(pages.map((p) => [p.afterId, p.limit])).toEqual([
      ["", replayBatchSize],
      ["evt_00499", 500],
      ["evt_00999", 500],
      ["evt_01000", 500],
    ]);
    expect(inserts.map((i) => i.pairs.length)).toEqual([1_000, 1_000, 2]);
    expect(inserts.every((i) => i.now === 7)).toBe(true);
    expect(inserts[2]!.pairs.map((p) => [p.event.id, p.target])).toEqual([
      ["evt_01000", "a"],
      ["evt_01000", "b"],
    ]);
    expect(progress).toEqual([500, 1_000, 1_001]);
  });

  it("passes the filter to every page and routes each event by its own source", async () => {
    const { driver, pages, inserts } = table(4);
    const result = await replayInBatches(
      driver,
      { source: "stripe" },
      { now: 1, targetsFor: (event) => [`${event.source}:*`] },
    );
    expect(result).toEqual({ events: 2, deliveries: 2 });
    expect(pages.map((p) => p.filter)).toEqual([{ source: "stripe" }, { source: "stripe" }]);
    expect(inserts[0]!.pairs.map((p) => p.target)).toEqual(["stripe:*", "stripe:*"]);
  });

  it("counts events that route nowhere without an insert for them", async () => {
    const { driver, inserts } = table(3);
    const progress: number[] = [];
    const result = await replayInBatches(
      driver,
      {},
      { now: 1, targetsFor: () => [], onProgress: (done) => progress.push(done) },
    );
    expect(result).toEqual({ events: 3, deliveries: 0 });
    expect(inserts).toHaveLength(0);
    expect(progress).toEqual([3]);
  });

  it("reads one empty page and nothing else when no event matches", async () => {
    const { driver, pages, inserts } = table(0);
    expect(await replayInBatches(driver, {}, { now: 1, targetsFor: () => ["a"] })).toEqual({
      events: 0,
      deliveries: 0,
    });
    expect(pages).toHaveLength(1);
    expect(inserts).toHaveLength(0);
  });
});
