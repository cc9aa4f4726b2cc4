import { describe, expect, it } from "vitest";
import { decideEffectClaim, type ExistingEffect } from "./effect-claim.ts";

const row = (overrides: Partial<ExistingEffect> = {}): ExistingEffect => ({
  id: "eff_1",
  status: "processing",
  claimant: "att_old",
  claimed_at: 1_000,
  result: undefined,
  claimant_outcome: "error",
  ...overrides,
});
const input = { claimant: "att_new", onStale: "hold" as const, staleAfterMs: 5_000 };

describe("decideEffectClaim: one decision for both drivers", () => {
  it("returns a done effect's result and writes nothing", () => {
    expect(decideEffectClaim(row({ status: "done", result: { ok: 1 } }), input, 9_999)).toEqual({
      claim: { state: "done", effectId: "eff_1", result: { ok: 1 } },
      write: "none",
    });
  });

  it("keeps a held effect held", () => {
    expect(decideEffectClaim(row({ status: "held" }), input, 99_000)).toEqual({
      claim: { state: "held", effectId: "eff_1", newlyHeld: false },
      write: "none",
    });
  });

  it("lets the same claimant go on", () => {
    expect(decideEffectClaim(row({ claimant: "att_new" }), input, 99_000).claim).toEqual({
      state: "claimed",
      effectId: "eff_1",
      reclaimed: false,
    });
  });

  it("is busy while the claim is fresh, or while its attempt still runs", () => {
    expect(decideEffectClaim(row(), input, 6_000).claim.state).toBe("busy");
    const running = row({ claimant_outcome: "running" });
    expect(decideEffectClaim(running, input, 999_000)).toEqual({
      claim: { state: "busy", effectId: "eff_1", claimedAt: 1_000 },
      write: "none",
    });
  });

  it("holds a stale claim (onStale: hold) and takes it over (onStale: reclaim)", () => {
    expect(decideEffectClaim(row(), input, 6_001)).toEqual({
      claim: { state: "held", effectId: "eff_1", newlyHeld: true },
      write: "hold",
    });
    expect(decideEffectClaim(row(), { ...input, onStale: "reclaim" }, 6_001)).toEqual({
      claim: { state: "claimed", effectId: "eff_1", reclaimed: true },
      write: "reclaim",
    });
  });
});
