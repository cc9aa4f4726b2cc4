import { describe, expect, it } from "vitest";
import { isHookinboxError } from "../../errors.ts";
import { retryFallback } from "./retry.ts";

describe("retryFallback: one run-now rule for both drivers", () => {
  it("finds nothing to run for a missing delivery", () => {
    expect(retryFallback(undefined)).toBe("none");
    expect(retryFallback(null)).toBe("none");
  });

  it("runs a blocked delivery's key head", () => {
    expect(retryFallback("blocked")).toBe("run-key-head");
  });

  it("refuses running and finished deliveries", () => {
    for (const status of ["running", "done", "stale"]) {
      let refused: unknown;
      try {
        retryFallback(status);
      } catch (error) {
        refused = error;
      }
      expect(isHookinboxError(refused, "HOOKINBOX_DELIVERY_NOT_RETRYABLE"), status).toBe(true);
    }
  });
});
