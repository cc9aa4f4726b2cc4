import { describe, expect, it } from "vitest";
import { HookinboxError } from "../../errors.ts";
import {
  deliveryTerms,
  eventFilterTerms,
  receiptTerms,
  renderWhere,
  replayTerms,
} from "./filters.ts";
import { encodeCursor } from "./paging.ts";

const dollar = (n: number) => `$${n}`;
const question = () => "?";

describe("list and replay filters: one set of conditions for both drivers", () => {
  it("renders no terms as no WHERE", () => {
    expect(renderWhere(eventFilterTerms({}), dollar)).toEqual({ where: "", values: [] });
  });

  it("numbers PostgreSQL placeholders after the values bound before", () => {
    expect(renderWhere(eventFilterTerms({ source: "s", status: "done" }), dollar, 1)).toEqual({
      where: "WHERE source = $2 AND status = $3",
      values: ["s", "done"],
    });
  });

  it("keeps SQLite's positional placeholders", () => {
    const id = "dlv_01JD7Q5Z8X9K3M4N5P6R7S8T9V";
    expect(
      renderWhere(
        deliveryTerms({ status: "dead", eventId: "evt_1", cursor: encodeCursor(id) }),
        question,
      ),
    ).toEqual({
      where: "WHERE status = ? AND event_id = ? AND id < ?",
      values: ["dead", "evt_1", id],
    });
  });

  it("filters receipts by rejection without a bound value", () => {
    expect(renderWhere(receiptTerms({ rejected: true, source: "s" }), dollar)).toEqual({
      where: "WHERE event_id IS NULL AND source = $1",
      values: ["s"],
    });
    expect(renderWhere(receiptTerms({ rejected: false }), dollar).where).toBe(
      "WHERE event_id IS NOT NULL",
    );
  });

  it("bounds replays by whole received milliseconds, from inclusive, to exclusive", () => {
    expect(
      renderWhere(replayTerms({ type: "t", receivedFrom: 10.7, receivedTo: 20.2 }), dollar),
    ).toEqual({
      where: "WHERE type = $1 AND received_at >= $2 AND received_at < $3",
      values: ["t", 10, 20],
    });
  });

  it("refuses a cursor of another kind", () => {
    const cursor = encodeCursor("evt_01JD7Q5Z8X9K3M4N5P6R7S8T9V");
    expect(() => deliveryTerms({ cursor })).toThrow(HookinboxError);
  });
});
