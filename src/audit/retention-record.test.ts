import { describe, expect, it } from "vitest";
import { parseRetentionLeafId, retentionIndex, retentionLeafId } from "./retention-record.ts";

const record = (seq: number, kind: "events" | "receipts", firstId: string, lastId: string) => ({
  seq,
  eventId: retentionLeafId(`U${seq}`, { kind, firstId, lastId, removed: 1, cut: 0 }),
});

describe("retention records", () => {
  it("finds the record covering an id, inclusive at both ends, by kind, with overlapping ranges", () => {
    const index = retentionIndex([
      record(10, "events", "evt_B", "evt_D"),
      record(11, "events", "evt_A", "evt_Z"),
      record(12, "events", "evt_F", "evt_G"),
      record(13, "receipts", "rcp_A", "rcp_C"),
    ]);
    expect(index.coveringLeaf("events", "evt_B")).toBe(10);
    expect(index.coveringLeaf("events", "evt_D")).toBe(10);
    // Only the wide range holds E: the walk back passes F-G and B-D.
    expect(index.coveringLeaf("events", "evt_E")).toBe(11);
    expect(index.coveringLeaf("events", "evt_0")).toBeNull();
    expect(index.coveringLeaf("events", "rcp_B")).toBeNull();
    expect(index.coveringLeaf("receipts", "rcp_C")).toBe(13);
    expect(index.coveringLeaf("receipts", "rcp_D")).toBeNull();
    expect(retentionIndex([]).coveringLeaf("events", "evt_A")).toBeNull();
  });

  it("refuses a malformed record", () => {
    for (const id of [
      "evt_1",
      "ret_U/events/evt_B/evt_A/1/0", // first after last
      "ret_U/deliveries/evt_A/evt_B/1/0",
      "ret_U/events/evt_A/evt_B/x/0",
      "ret_U/events/evt_A/evt_B/1",
    ])
      expect(parseRetentionLeafId(id)).toBeNull();
    expect(
      retentionIndex([{ seq: 1, eventId: "ret_U/events/evt_B/evt_A/1/0" }]).coveringLeaf(
        "events",
        "evt_A",
      ),
    ).toBeNull();
  });
});
