import { describe, expect, it } from "vitest";
import { idempotencyKey } from "./idempotency-key.ts";

describe("idempotencyKey", () => {
  it("is deterministic per (source, provider id, name) and differs when any part does", () => {
    const key = idempotencyKey("stripe", "evt_1", "refund");
    expect(key).toBe(idempotencyKey("stripe", "evt_1", "refund"));
    expect(key).toMatch(/^hookinbox-[0-9a-f]{38}$/);
    const others = [
      idempotencyKey("stripe", "evt_1", "email"),
      idempotencyKey("stripe", "evt_2", "refund"),
      idempotencyKey("shop", "evt_1", "refund"),
      // The separator keeps ("a", "bc") and ("ab", "c") apart.
      idempotencyKey("stripe", "evt_1r", "efund"),
    ];
    expect(new Set([key, ...others]).size).toBe(5);
  });
});
