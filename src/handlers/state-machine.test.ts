import { describe, expect, it } from "vitest";
import { IllegalTransitionError, PermanentError } from "./errors.ts";
import { stateMachine } from "./state-machine.ts";

const subscription = stateMachine({
  initial: "incomplete",
  transitions: {
    incomplete: ["active", "incomplete_expired"],
    active: ["past_due", "canceled"],
    past_due: ["active", "canceled"],
  },
});

describe("stateMachine", () => {
  it("allows configured transitions, repeats, and starts from initial", () => {
    expect(subscription.next("active", "past_due")).toBe("past_due");
    expect(subscription.next("active", "active")).toBe("active");
    expect(subscription.next(null, "active")).toBe("active");
    expect(subscription.can("past_due", "active")).toBe(true);
  });

  it("throws IllegalTransitionError, a PermanentError, for a forbidden move", () => {
    try {
      subscription.next("incomplete_expired", "active");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(IllegalTransitionError);
      expect(error).toBeInstanceOf(PermanentError);
      expect(error).toMatchObject({
        code: "HOOKINBOX_ILLEGAL_TRANSITION",
        from: "incomplete_expired",
        to: "active",
      });
    }
    expect(() => subscription.next("canceled", "active")).toThrow(
      "illegal transition canceled → active",
    );
  });
});
