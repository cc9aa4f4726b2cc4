import { describe, expect, it } from "vitest";
import type { FailInput } from "../queue-types.ts";
import { maxErrorMessage, maxErrorStack, withStoredError } from "./failure-text.ts";

const input = (message: string, stack: string | null): FailInput => ({
  deliveryId: "dlv_1",
  workerId: "w1",
  attempt: 1,
  now: 0,
  error: { message, stack },
  retryAt: null,
  outcome: "error",
  blockKey: false,
});

describe("withStoredError: one cap for both stores", () => {
  it("keeps a short failure as it is", () => {
    const short = input("boom", null);
    expect(withStoredError(short)).toBe(short);
  });

  it("caps the message at 2000 characters and the stack at 8000", () => {
    const capped = withStoredError(input("m".repeat(2001), "s".repeat(8001)));
    expect(maxErrorMessage).toBe(2000);
    expect(maxErrorStack).toBe(8000);
    expect(capped.error).toEqual({ message: "m".repeat(2000), stack: "s".repeat(8000) });
  });
});
