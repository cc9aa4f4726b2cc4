import { describe, expect, it } from "vitest";
import { type BatchOutcome, gatherBatches } from "./gather-batches.ts";

describe("gatherBatches", () => {
  it("gathers calls of one turn into one batch and calls made meanwhile into the next", async () => {
    const batches: number[][] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const double = gatherBatches<number, number>(
      async (inputs) => {
        batches.push([...inputs]);
        if (batches.length === 1) await gate;
        return inputs.map((n): BatchOutcome<number> => ({ ok: true, value: n * 2 }));
      },
      { maxBatch: 3, maxInFlight: 1 },
    );
    const first = [double(1), double(2)];
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1, 2]]);
    const later = [double(3), double(4), double(5), double(6)];
    release();
    expect(await Promise.all([...first, ...later])).toEqual([2, 4, 6, 8, 10, 12]);
    expect(batches).toEqual([[1, 2], [3, 4, 5], [6]]);
  });

  it("settles each caller with its own outcome, and all of a batch when the flush throws", async () => {
    let fail = false;
    const check = gatherBatches<string, string>(
      async (inputs) => {
        if (fail) throw new Error("whole batch");
        return inputs.map(
          (s): BatchOutcome<string> =>
            s === "bad" ? { ok: false, error: new Error(s) } : { ok: true, value: s },
        );
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const results = await Promise.allSettled([check("a"), check("bad"), check("b")]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    fail = true;
    const failed = await Promise.allSettled([check("c"), check("d")]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });

  it("keeps an item that may not join out of a batch, and runs up to maxInFlight batches at once", async () => {
    const batches: string[][] = [];
    let running = 0;
    let most = 0;
    const store = gatherBatches<string, string>(
      async (inputs) => {
        batches.push([...inputs]);
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        return inputs.map((s): BatchOutcome<string> => ({ ok: true, value: s }));
      },
      { maxBatch: 2, maxInFlight: 2 },
      (item, batch) => !batch.includes(item),
    );
    expect(await Promise.all(["a", "a", "b", "c", "d"].map(store))).toEqual([
      "a",
      "a",
      "b",
      "c",
      "d",
    ]);
    expect(batches).toEqual([["a", "b"], ["a", "c"], ["d"]]);
    expect(most).toBe(2);
  });
});
