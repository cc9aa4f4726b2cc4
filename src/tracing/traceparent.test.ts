import { ROOT_CONTEXT, TraceFlags, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { traceLogFields } from "./log-fields.ts";
import { traceReceive } from "./receive-span.ts";
import { activeTraceparent, formatTraceparent, parseTraceparent } from "./traceparent.ts";
import { hookinboxTracer } from "./tracer.ts";

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
const spanId = "00f067aa0ba902b7";

describe("traceparent", () => {
  it("reads and writes W3C version 00", () => {
    const parsed = parseTraceparent(`00-${traceId}-${spanId}-01`);
    expect(parsed).toEqual({ traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    expect(formatTraceparent(parsed!)).toBe(`00-${traceId}-${spanId}-01`);
    expect(formatTraceparent({ ...parsed!, traceFlags: TraceFlags.NONE })).toBe(
      `00-${traceId}-${spanId}-00`,
    );
    // Flags other than "sampled" are not carried on.
    expect(parseTraceparent(`00-${traceId}-${spanId}-ff`)?.traceFlags).toBe(TraceFlags.SAMPLED);
  });

  it("refuses anything else, never throwing", () => {
    for (const value of [
      null,
      undefined,
      "",
      `01-${traceId}-${spanId}-01`,
      `00-${traceId.toUpperCase()}-${spanId}-01`,
      `00-${"0".repeat(32)}-${spanId}-01`,
      `00-${traceId}-${"0".repeat(16)}-01`,
      `00-${traceId}-${spanId}`,
      `00-${traceId}-${spanId}-01-extra`,
    ]) {
      expect(parseTraceparent(value)).toBeNull();
    }
    expect(formatTraceparent({ traceId: "0".repeat(32), spanId, traceFlags: 1 })).toBeNull();
  });
});

describe("with no SDK registered (the API's no-op provider)", () => {
  it("a receive span records nothing and stores no traceparent; no span is active; logs get no ids", async () => {
    const seen: Array<string | null> = [];
    const answer = await traceReceive(
      hookinboxTracer(),
      "stripe",
      { method: "POST", url: "/webhooks/stripe", bodySize: 10, traceparent: null },
      async (receive) => {
        receive.phase("verified");
        receive.outcome("stored", undefined);
        seen.push(receive.traceparent, activeTraceparent());
        return { status: 200 };
      },
    );
    expect(answer).toEqual({ status: 200 });
    expect(seen).toEqual([null, null]);
    expect(traceLogFields()).toEqual({});
  });

  it("a span context set by hand is what activeTraceparent and the log fields read", () => {
    const ctx = trace.setSpanContext(ROOT_CONTEXT, {
      traceId,
      spanId,
      traceFlags: TraceFlags.SAMPLED,
    });
    expect(activeTraceparent(ctx)).toBe(`00-${traceId}-${spanId}-01`);
  });
});
