import { describe, expect, it } from "vitest";
import { ulid, ulidTimePrefix } from "./ids.ts";

describe("ulid", () => {
  it("gives 26 Crockford base32 characters that sort in creation order, across pool refills", () => {
    const at = 1_767_225_600_000;
    // 250 ids per millisecond over 40 ms: 40 fresh draws and 9,960 increments.
    const ids: string[] = [];
    for (let i = 0; i < 10_000; i++) ids.push(ulid(at + Math.floor(i / 250)));
    for (const id of ids) expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(ids).size).toBe(10_000);
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]!.slice(0, 10)).toBe(ulidTimePrefix(at));
  });

  it("draws different random parts for different milliseconds", () => {
    const first = ulid(1_900_000_000_000).slice(10);
    const randoms = new Set<string>();
    for (let i = 1; i <= 300; i++) randoms.add(ulid(1_900_000_000_000 + i * 120_000).slice(10));
    expect(randoms.size).toBe(300);
    expect(randoms.has(first)).toBe(false);
  });
});
