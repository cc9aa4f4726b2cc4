import { describe, expect, it } from "vitest";
import { compilePattern, type ResolvedHandler } from "../handlers/routes.ts";
import { leasePlan } from "./leases.ts";

const handler = (target: string, leaseMs: number): [string, ResolvedHandler] => [
  target,
  {
    target,
    handler: async () => undefined,
    leaseMs,
    timeoutMs: 300_000,
    retry: { scheduleMs: [1000], maxAttempts: 2, jitter: "none" },
    stale: "skip",
    onDeadLetter: "block",
    matches: compilePattern(target),
  },
];

describe("leasePlan", () => {
  it("gives each target its own lease, the rest the default; heartbeat and rescue follow the shortest", () => {
    const plan = leasePlan(
      600_000,
      new Map([handler("std:fast", 2_000), handler("std:*", 600_000)]),
      { app: 25_000 },
    );
    expect(plan.targetLeaseMs).toEqual({ app: 25_000, "std:fast": 2_000 });
    expect([plan.of("std:fast"), plan.of("std:*"), plan.of("app"), plan.of("other")]).toEqual([
      2_000, 600_000, 25_000, 600_000,
    ]);
    expect(plan.heartbeatMs).toBe(666);
    expect(plan.rescueEveryMs).toBe(1_000);
  });

  it("without handler or destination leases: everything on the default, floors of 50 and 100 ms", () => {
    expect(leasePlan(30_000, new Map())).toMatchObject({
      targetLeaseMs: {},
      heartbeatMs: 10_000,
      rescueEveryMs: 15_000,
    });
    expect(leasePlan(90, new Map())).toMatchObject({ heartbeatMs: 50, rescueEveryMs: 100 });
  });
});
