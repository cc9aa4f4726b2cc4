import { describe, expect, it } from "vitest";
import {
  addCall,
  afterTrial,
  type CallResult,
  type CircuitPolicy,
  type CircuitWindow,
  callResult,
  circuitPhase,
  defaultCircuitPolicy,
  noCalls,
  shouldOpen,
  windowEstimate,
  windowStartOf,
} from "./circuit-policy.ts";

const policy = defaultCircuitPolicy;
const emptyWindow: CircuitWindow = {
  start: 0,
  calls: 0,
  failures: 0,
  prevCalls: 0,
  prevFailures: 0,
};

/** The stored window after `results` within one bucket starting at `start`. */
function windowOf(start: number, results: readonly CallResult[]): CircuitWindow {
  const counts = results.reduce(addCall, noCalls);
  return { start, calls: counts.calls, failures: counts.failures, prevCalls: 0, prevFailures: 0 };
}

describe("circuit policy", () => {
  it("reads answers: 2xx, 3xx and 4xx but 408/429 are healthy; 5xx, 408, 429 fail; connect, timeout, reset, DNS are down", () => {
    const status = (s: number) => callResult({ status: s, errorClass: "http-status" });
    for (const s of [200, 204, 301, 400, 401, 403, 404, 409, 410, 413, 422]) {
      expect(status(s), String(s)).toBe("healthy");
    }
    for (const s of [408, 429, 500, 502, 503, 504, 508])
      expect(status(s), String(s)).toBe("failure");
    const error = (errorClass: string) => callResult({ status: null, errorClass });
    for (const c of ["connect", "timeout", "reset", "dns"]) expect(error(c), c).toBe("down");
    expect(error("network")).toBe("failure");
    // Nothing sent, or given up on this side: nothing learned about the destination.
    expect(error("address-refused")).toBeNull();
    expect(callResult({ status: null, errorClass: "address-refused", refused: true })).toBeNull();
    expect(callResult({ status: null, errorClass: "timeout", aborted: true })).toBeNull();
  });

  it("counts results in order: the down run is what follows the last result that was not down", () => {
    expect((["down", "down"] as const).reduce(addCall, noCalls)).toEqual({
      calls: 2,
      failures: 2,
      downs: 2,
      brokeRun: false,
    });
    expect((["down", "healthy", "down"] as const).reduce(addCall, noCalls)).toEqual({
      calls: 3,
      failures: 2,
      downs: 1,
      brokeRun: true,
    });
    // A 5xx is an answer: the app is there, so it breaks the run of downs.
    expect((["down", "failure"] as const).reduce(addCall, noCalls)).toEqual({
      calls: 2,
      failures: 2,
      downs: 0,
      brokeRun: true,
    });
  });

  it("buckets are aligned to the epoch, and the previous one counts by its overlap with the window", () => {
    expect(windowStartOf(1_700_000_012_345, 30_000)).toBe(1_700_000_010_000);
    const window = { start: 30_000, calls: 10, failures: 9, prevCalls: 60, prevFailures: 30 };
    const estimate = (at: number) => {
      const { calls, failures } = windowEstimate(window, at, 30_000);
      return {
        calls: Math.round(calls * 1000) / 1000,
        failures: Math.round(failures * 1000) / 1000,
      };
    };
    expect(estimate(30_000)).toEqual({ calls: 70, failures: 39 });
    expect(estimate(40_000)).toEqual({ calls: 50, failures: 29 });
    // The next bucket: the stored current one is now the previous one.
    expect(estimate(75_000)).toEqual({ calls: 5, failures: 4.5 });
    // Two buckets on: nothing counts.
    expect(estimate(90_000)).toEqual({ calls: 0, failures: 0 });
  });

  it("opens by rate only past minCalls, at failureRate or more", () => {
    const at = 60_000;
    const failing = (n: number, failed: number) =>
      windowOf(at, [
        ...Array<CallResult>(failed).fill("failure"),
        ...Array<CallResult>(n - failed).fill("healthy"),
      ]);
    // 49 calls, all failed: under minCalls.
    expect(shouldOpen({ downInRow: 0, window: failing(49, 49) }, at, policy)).toBeNull();
    expect(shouldOpen({ downInRow: 0, window: failing(50, 50) }, at, policy)).toBe("rate");
    // 0.85 × 60 = 51 exactly (not a hair over in floating point).
    expect(shouldOpen({ downInRow: 0, window: failing(60, 51) }, at, policy)).toBe("rate");
    expect(shouldOpen({ downInRow: 0, window: failing(60, 50) }, at, policy)).toBeNull();
    // The flaky app: 2 in 3 first attempts fail, all later ones pass.
    expect(shouldOpen({ downInRow: 0, window: failing(150, 100) }, at, policy)).toBeNull();
    // Failures from two buckets ago do not count.
    expect(shouldOpen({ downInRow: 0, window: failing(100, 100) }, at + 60_000, policy)).toBeNull();
  });

  it("opens at downInRow down results in a row, whatever the window", () => {
    const at = 60_000;
    expect(shouldOpen({ downInRow: 4, window: emptyWindow }, at, policy)).toBeNull();
    expect(shouldOpen({ downInRow: 5, window: emptyWindow }, at, policy)).toBe("down");
    const custom: CircuitPolicy = { ...policy, downInRow: 2 };
    expect(shouldOpen({ downInRow: 2, window: emptyWindow }, at, custom)).toBe("down");
  });

  it("phases: closed without openUntil, open before it, half-open from it", () => {
    expect(circuitPhase(null, 10)).toBe("closed");
    expect(circuitPhase(11, 10)).toBe("open");
    expect(circuitPhase(10, 10)).toBe("half-open");
    expect(circuitPhase(9, 10)).toBe("half-open");
  });

  it("a failed trial reopens; all trials passed close; otherwise the free slots are filled", () => {
    expect(afterTrial("failure", { taken: 1, passed: 0 }, policy)).toEqual({ action: "reopen" });
    expect(afterTrial("down", { taken: 3, passed: 2 }, policy)).toEqual({ action: "reopen" });
    expect(afterTrial("healthy", { taken: 1, passed: 1 }, policy)).toEqual({
      action: "wait",
      wake: 2,
    });
    expect(afterTrial("healthy", { taken: 3, passed: 2 }, policy)).toEqual({
      action: "wait",
      wake: 0,
    });
    expect(afterTrial("healthy", { taken: 3, passed: 3 }, policy)).toEqual({ action: "close" });
    // A 4xx answer is the app up: a passed trial.
    const rejected = callResult({ status: 422, errorClass: "http-status" })!;
    expect(afterTrial(rejected, { taken: 1, passed: 1 }, { ...policy, trials: 1 })).toEqual({
      action: "close",
    });
  });
});
