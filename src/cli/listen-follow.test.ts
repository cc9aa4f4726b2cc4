import { describe, expect, it } from "vitest";
import { eventIdFloor } from "../admin/event-range.ts";
import { idTime, ulid } from "../ids.ts";
import { apiUrl, overlapCursor } from "./listen-follow.ts";

describe("listen's cursors and URLs", () => {
  it("resumes 5 s before the cursor, below every id made since then", () => {
    const at = Date.parse("2026-12-06T12:00:00.000Z");
    expect(idTime(eventIdFloor(at))).toBe(at);
    expect(overlapCursor(eventIdFloor(at))).toBe(eventIdFloor(at - 5_000));
    const id = `evt_${ulid()}`;
    expect(overlapCursor(id) < id).toBe(true);
    expect(idTime(overlapCursor(id))).toBe(idTime(id) - 5_000);
  });

  it("keeps the gateway URL's path", () => {
    const token = "t";
    expect(apiUrl({ gateway: "https://h.example/", token }, "/api/events/x")).toBe(
      "https://h.example/api/events/x",
    );
    expect(apiUrl({ gateway: "https://h.example/ops/", token }, "/api/events/x")).toBe(
      "https://h.example/ops/api/events/x",
    );
  });
});
