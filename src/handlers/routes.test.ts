import { describe, expect, it } from "vitest";
import { compilePattern, retryDelay } from "./routes.ts";

describe("compilePattern", () => {
  it.each([
    ["*", "stripe", "invoice.paid", true],
    ["*", "github", null, true],
    ["stripe:*", "stripe", "invoice.paid", true],
    ["stripe:*", "stripe", null, true],
    ["stripe:*", "github", "push", false],
    ["stripe:invoice.*", "stripe", "invoice.paid", true],
    ["stripe:invoice.*", "stripe", "invoice.payment_failed", true],
    ["stripe:invoice.*", "stripe", "invoiceXpaid", false],
    ["stripe:invoice.*", "stripe", "customer.created", false],
    ["stripe:invoice.paid", "stripe", "invoice.paid", true],
    ["stripe:invoice.paid", "stripe", "invoice.paid.extra", false],
    ["stripe:invoice.paid", "stripe", null, false],
    ["*:ping", "github", "ping", true],
    ["*:ping", "demo", "ping", true],
    ["*:ping", "demo", "pong", false],
  ] as const)("%s routes (%s, %s) → %s", (pattern, source, type, expected) => {
    expect(compilePattern(pattern)(source, type)).toBe(expected);
  });

  it.each([
    ["stripe:*", "a\nb", true],
    ["stripe:*", "\r\n", true],
    ["stripe:a*b", "a\nb", true],
    ["stripe:a*b", "a\r\n\u2028b", true],
    ["stripe:invoice.*", "invoice.paid\nforged", true],
    ["stripe:*.paid", "in\nvoice.paid", true],
    ["stripe:invoice.paid", "invoice.paid\n", false],
    ["stripe:a*b", "a\nbc", false],
    // regex metacharacters stay literal
    ["stripe:a.b", "axb", false],
    ["stripe:a.b", "a.b", true],
    ["stripe:a+b", "aab", false],
    ["stripe:a+b", "a+b", true],
    ["stripe:a?b", "ab", false],
    ["stripe:(a|b)", "a", false],
    ["stripe:(a|b)", "(a|b)", true],
    ["stripe:[ab]", "a", false],
    ["stripe:[ab]", "[ab]", true],
    ["stripe:a{2}", "aa", false],
    ["stripe:^a$", "^a$", true],
    ["stripe:a\\d", "a1", false],
    ["stripe:a\\d", "a\\d", true],
  ] as const)(
    "* matches line breaks, all else is literal: %s matches %j → %s",
    (pattern, type, expected) => {
      expect(compilePattern(pattern)("stripe", type)).toBe(expected);
    },
  );
});

describe("retryDelay", () => {
  const policy = { scheduleMs: [1000, 5000, 60_000], maxAttempts: 5, jitter: "none" as const };

  it("follows the schedule and repeats its last delay", () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(policy, n, Math.random))).toEqual([
      1000, 5000, 60_000, 60_000, 60_000,
    ]);
  });

  it("draws uniformly in [0, delay] with full jitter", () => {
    const full = { ...policy, jitter: "full" as const };
    expect(retryDelay(full, 2, () => 0)).toBe(0);
    expect(retryDelay(full, 2, () => 0.5)).toBe(2500);
    expect(retryDelay(full, 2, () => 0.999_999_9)).toBe(5000);
  });
});
