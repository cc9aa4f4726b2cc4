import { describe, expect, it } from "vitest";
import { isHookinboxError } from "../errors.ts";
import { readHeaders } from "./headers.ts";
import { identify } from "./identify.ts";
import { readJsonPath } from "./json-path.ts";

const body = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe("readJsonPath", () => {
  it("reads keys and indexes, and gives undefined for any missing step", () => {
    const doc = { data: { items: [{ id: "a" }, { id: "b" }] } };
    expect(readJsonPath(doc, "$.data.items[1].id")).toBe("b");
    expect(readJsonPath(doc, "$.data.items[2].id")).toBeUndefined();
    expect(readJsonPath(doc, "$.data.nope.id")).toBeUndefined();
    expect(readJsonPath("text", "$.a")).toBeUndefined();
  });
});

describe("identify", () => {
  const headers = readHeaders([["X-Event-Id", "hdr-1"]]);

  it("reads every field from JSON paths and headers, normalising times and versions", () => {
    const identity = identify(
      {
        id: "header:x-event-id",
        type: "$.kind",
        occurredAt: "$.at",
        orderingKey: "$.obj.id",
        version: "$.obj.updated",
      },
      headers,
      body({
        kind: "thing.updated",
        at: 1_700_000_000,
        obj: { id: 42, updated: "2026-11-30T12:00:00Z" },
      }),
    );
    expect(identity).toEqual({
      dedupKey: "hdr-1",
      type: "thing.updated",
      occurredAt: 1_700_000_000_000,
      orderingKey: "42",
      version: Date.parse("2026-11-30T12:00:00Z"),
    });
  });

  it("keeps millisecond epochs as they are and numeric strings as numbers", () => {
    const identity = identify(
      { id: "$.id", occurredAt: "$.ms", version: "$.seq" },
      headers,
      body({ id: 7, ms: 1_700_000_000_123, seq: "19" }),
    );
    expect(identity.occurredAt).toBe(1_700_000_000_123);
    expect(identity.version).toBe(19);
    expect(identity.dedupKey).toBe("7");
  });

  it("refuses an event without an id: no body-hash fallback", () => {
    try {
      identify({ id: "$.eventId" }, headers, body({ other: 1 }));
      expect.unreachable();
    } catch (error) {
      expect(isHookinboxError(error, "HOOKINBOX_EVENT_ID_MISSING")).toBe(true);
      expect((error as Error).message).toContain("$.eventId");
    }
  });

  it("rejects a non-JSON body when the id lives in it, but not when only optional fields do", () => {
    const text = new TextEncoder().encode("a=1&b=2");
    expect(() => identify({ id: "$.id" }, headers, text)).toThrowError(/not valid JSON/);
    expect(identify({ id: "header:x-event-id", type: "$.type" }, headers, text)).toMatchObject({
      dedupKey: "hdr-1",
      type: null,
    });
  });
});
