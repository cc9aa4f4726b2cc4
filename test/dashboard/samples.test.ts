import { describe, expect, it } from "vitest";
import type { Overview } from "../../src/operations/dashboard.ts";
import { addSample, noSamples } from "../../web/src/samples.ts";

// The overview page's rolling samples of the gauges the store keeps no history of: one point per
// newer overview, a window that drops old points, targets that join late read 0 before, and a
// target idle for the whole window leaves.

const target = (name: string, failing: number, dead: number) => ({
  source: "std",
  target: name,
  pending: 0,
  blocked: 0,
  running: 0,
  failing,
  dead,
  oldestAgeSeconds: 0,
});

function overview(at: number, oldest: number, targets: Overview["targets"]): Overview {
  return {
    now: new Date(at).toISOString(),
    minutes: 5,
    series: { minute: [], received: [], duplicates: [], rejected: [], rejectedByReason: [] },
    totals: { received: 0, duplicates: 0, rejected: 0, duplicateRate: 0 },
    sources: [],
    rejectedByReason: [],
    targets,
    oldestUnprocessedAgeSeconds: oldest,
    heldEffects: 0,
  };
}

describe("addSample", () => {
  it("appends, aligns late targets with zeros, drops old points and idle targets", () => {
    let s = addSample(noSamples, overview(1_000, 5, [target("a", 1, 0)]), 10_000);
    s = addSample(s, overview(6_000, 7, [target("a", 1, 0), target("b", 0, 2)]), 10_000);
    expect(s.at).toEqual([1_000, 6_000]);
    expect(s.oldestAge).toEqual([5, 7]);
    expect([...s.targets.values()]).toEqual([
      { label: "std → a", failing: [1, 1], dead: [0, 0] },
      { label: "std → b", failing: [0, 0], dead: [0, 2] },
    ]);

    // An answer no newer than the last sample adds nothing.
    expect(addSample(s, overview(6_000, 9, []), 10_000)).toBe(s);

    // 12 s: the 1 s point is out of the 10 s window; "a" is gone from the overview (reads 0).
    s = addSample(s, overview(12_000, 0, [target("b", 0, 2)]), 10_000);
    expect(s.at).toEqual([6_000, 12_000]);
    expect(s.oldestAge).toEqual([7, 0]);
    expect(s.targets.get("std\0a")).toEqual({ label: "std → a", failing: [1, 0], dead: [0, 0] });

    // 17 s: "a" read 0 in every kept point, so it leaves; "b" stays.
    s = addSample(s, overview(17_000, 0, [target("b", 0, 2)]), 10_000);
    expect(s.at).toEqual([12_000, 17_000]);
    expect([...s.targets.keys()]).toEqual(["std\0b"]);
    expect(s.targets.get("std\0b")!.dead).toEqual([2, 2]);
  });
});
