import { describe, expect, it } from "vitest";
import type { FailInput } from "../queue-types.ts";
import { completionPlan, failurePlan } from "./end-plan.ts";
import { maxErrorMessage } from "./failure-text.ts";

const attempt = { deliveryId: "dlv_1", workerId: "w1", attempt: 2, now: 1000.7 };
const failure = (over: Partial<FailInput>): FailInput => ({
  ...attempt,
  error: { message: "boom", stack: null },
  retryAt: null,
  outcome: "error",
  blockKey: false,
  ...over,
});

describe("end plans: core decides how an attempt ends", () => {
  it("a success ends the delivery done, records its version and runs the follow-ups", () => {
    const plan = completionPlan(attempt, "done");
    expect(plan).toMatchObject({ status: "done", outcome: "success", recordApplied: true });
    expect(plan).toMatchObject({ followUps: true, error: null, runAt: null, now: 1000 });
  });

  it("a stale skip ends the delivery stale without moving the applied version", () => {
    const plan = completionPlan(attempt, "stale");
    expect(plan).toMatchObject({ status: "stale", outcome: "stale", recordApplied: false });
    expect(plan.followUps).toBe(true);
  });

  it("a retry stays the key's head: pending at retryAt, no follow-ups", () => {
    const plan = failurePlan(failure({ retryAt: 5000.9, circuitWait: true, blockKey: true }));
    expect(plan).toMatchObject({ status: "pending", runAt: 5000, circuitWait: true });
    expect(plan).toMatchObject({ blockKey: false, followUps: false, recordApplied: false });
  });

  it("a dead letter blocks its key only when asked, and always refreshes its event", () => {
    expect(failurePlan(failure({ blockKey: true }))).toMatchObject({
      status: "dead",
      blockKey: true,
      followUps: true,
      circuitWait: false,
    });
    expect(failurePlan(failure({ outcome: "permanent" }))).toMatchObject({
      status: "dead",
      outcome: "permanent",
      blockKey: false,
    });
  });

  it("stores the error capped, as core/failure-text.ts caps it", () => {
    const plan = failurePlan(failure({ error: { message: "x".repeat(5000), stack: "s" } }));
    expect(plan.error?.message).toHaveLength(maxErrorMessage);
    expect(plan.error?.stack).toBe("s");
  });
});
