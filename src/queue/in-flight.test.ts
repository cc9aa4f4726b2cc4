import { describe, expect, it } from "vitest";
import type { ClaimedDelivery } from "../store/queue-types.ts";
import { createInFlight } from "./in-flight.ts";

const delivery = (id: string) => ({ id }) as ClaimedDelivery;

describe("createInFlight", () => {
  it("settled() resolves true when the last delivery leaves, false at its timeout otherwise", async () => {
    const inFlight = createInFlight();
    expect(await inFlight.settled(0)).toBe(true);
    inFlight.add({ delivery: delivery("a"), abort: new AbortController(), leaseMs: 1000 });
    inFlight.add({ delivery: delivery("b"), abort: new AbortController(), leaseMs: 2000 });
    expect(inFlight.size).toBe(2);
    expect(await inFlight.settled(1)).toBe(false);
    const settled = inFlight.settled(60_000);
    inFlight.delete("a");
    inFlight.delete("b");
    expect(await settled).toBe(true);
    expect(inFlight.size).toBe(0);
  });
});
