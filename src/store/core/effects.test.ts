import { describe, expect, it } from "vitest";
import type { EffectClaim } from "../queue-types.ts";
import { effectColumns } from "./effect-claim.ts";
import { effectHeldAlert, effectsListingSql } from "./effects.ts";

describe("effectsListingSql: one listing for both stores", () => {
  it("writes the same statement out for each dialect", () => {
    const query = { status: "held", eventId: "evt_1" } as const;
    expect(effectsListingSql("postgres", "hookinbox.effects", query)).toEqual({
      text: `SELECT ${effectColumns} FROM hookinbox.effects WHERE status = $1 AND event_id = $2 ORDER BY id LIMIT 500`,
      params: ["held", "evt_1"],
    });
    expect(effectsListingSql("sqlite", "effects", query)).toEqual({
      text: `SELECT ${effectColumns} FROM effects WHERE status = ? AND event_id = ? ORDER BY id LIMIT 500`,
      params: ["held", "evt_1"],
    });
    expect(effectsListingSql("sqlite", "effects", {}).params).toEqual([]);
  });
});

describe("effectHeldAlert: decided once, recorded by each driver", () => {
  const heldAlert = {
    occurrences: [{ condition: "effect-held:t:charge", kind: "effect-held", payload: { a: 1 } }],
    windowMs: 60_000,
  };
  const newlyHeld: EffectClaim = { state: "held", effectId: "eff_1", newlyHeld: true };

  it("records the alert, with the effect's id, only for the claim that held the effect", () => {
    expect(effectHeldAlert(newlyHeld, { heldAlert, now: 1000.7 })).toEqual({
      occurrences: [{ ...heldAlert.occurrences[0], payload: { a: 1, effectId: "eff_1" } }],
      at: { now: 1000, windowMs: 60_000 },
    });
    expect(effectHeldAlert({ ...newlyHeld, newlyHeld: false }, { heldAlert, now: 1 })).toBeNull();
    expect(effectHeldAlert(newlyHeld, { now: 1 })).toBeNull();
    const claimed: EffectClaim = { state: "claimed", effectId: "eff_1", reclaimed: true };
    expect(effectHeldAlert(claimed, { heldAlert, now: 1 })).toBeNull();
  });
});
