import { describe, expect, it } from "vitest";
import {
  checkTimestamp,
  checkTolerance,
  parseTimestamp,
  parseTimestampSeconds,
} from "../../src/providers/timestamps.js";
import { expectRejected } from "./helpers.js";

const NOW = 1_700_000_000_000;
const TOL = 300_000;

describe("checkTimestamp", () => {
  it.each([
    ["now", NOW],
    ["exactly at the tolerance in the past", NOW - TOL],
    ["exactly at the tolerance in the future", NOW + TOL],
    ["1 ms inside, past", NOW - TOL + 1],
    ["1 ms inside, future", NOW + TOL - 1],
  ])("accepts %s", (_name, signedAt) => {
    expect(() => checkTimestamp(signedAt, NOW, TOL)).not.toThrow();
  });

  it.each([
    ["1 ms too old", NOW - TOL - 1, "HOOKINBOX_TIMESTAMP_TOO_OLD"],
    ["1 s too old", NOW - TOL - 1000, "HOOKINBOX_TIMESTAMP_TOO_OLD"],
    ["epoch", 0, "HOOKINBOX_TIMESTAMP_TOO_OLD"],
    ["1 ms too far ahead", NOW + TOL + 1, "HOOKINBOX_TIMESTAMP_IN_FUTURE"],
    ["a year ahead", NOW + 365 * 86_400_000, "HOOKINBOX_TIMESTAMP_IN_FUTURE"],
  ] as const)("rejects %s", (_name, signedAt, code) => {
    expectRejected(() => checkTimestamp(signedAt, NOW, TOL), code, 400);
  });

  it("zero tolerance accepts only the exact instant", () => {
    expect(() => checkTimestamp(NOW, NOW, 0)).not.toThrow();
    expectRejected(() => checkTimestamp(NOW - 1, NOW, 0), "HOOKINBOX_TIMESTAMP_TOO_OLD", 400);
    expectRejected(() => checkTimestamp(NOW + 1, NOW, 0), "HOOKINBOX_TIMESTAMP_IN_FUTURE", 400);
  });

  it("Infinity disables the window", () => {
    expect(() => checkTimestamp(0, NOW, Number.POSITIVE_INFINITY)).not.toThrow();
    expect(() => checkTimestamp(NOW * 2, NOW, Number.POSITIVE_INFINITY)).not.toThrow();
  });
});

describe("parseTimestamp", () => {
  it.each([
    ["0", "s", 0],
    ["1", "s", 1000],
    ["1700000000", "s", 1_700_000_000_000],
    ["99999999999", "s", 99_999_999_999_000],
    ["1700000000123", "ms", 1_700_000_000_123],
    ["15000000", "ms", 15_000_000],
  ] as const)("%j (%s) → %d ms", (input, unit, expected) => {
    expect(parseTimestamp(input, unit)).toBe(expected);
  });

  it.each([
    ["empty", ""],
    ["letters", "abc"],
    ["exponent", "17e8"],
    ["sign", "+1700000000"],
    ["negative", "-1700000000"],
    ["fraction", "1700000000.5"],
    ["space", " 1700000000"],
    ["trailing space", "1700000000 "],
    ["leading zero", "01700000000"],
    ["hex", "0x65"],
    ["12 digits", "170000000000"],
    ["full-width digits", "１７００"],
    ["Infinity", "Infinity"],
  ])("seconds: rejects %s", (_name, input) => {
    expectRejected(() => parseTimestampSeconds(input), "HOOKINBOX_TIMESTAMP_MALFORMED", 400);
  });

  it("milliseconds: at most 14 digits", () => {
    expect(parseTimestamp("99999999999999", "ms")).toBe(99_999_999_999_999);
    expectRejected(
      () => parseTimestamp("100000000000000", "ms"),
      "HOOKINBOX_TIMESTAMP_MALFORMED",
      400,
    );
  });
});

describe("checkTolerance", () => {
  it("accepts non-negative numbers and Infinity", () => {
    expect(checkTolerance(0)).toBe(0);
    expect(checkTolerance(300_000)).toBe(300_000);
    expect(checkTolerance(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
  });

  it.each([-1, Number.NaN, Number.NEGATIVE_INFINITY])("rejects %s with a plain Error", (value) => {
    expect(() => checkTolerance(value)).toThrow(/toleranceMs/);
  });
});
