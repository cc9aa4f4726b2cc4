import { describe, expect, it } from "vitest";
import { idTime, ulid, ulidTimePrefix } from "./ids.ts";

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

describe("idTime", () => {
  it("reads back the time ulid and ulidTimePrefix encode, with or without a kind prefix", () => {
    for (const at of [0, 1, 86_400_000, 1_767_225_600_000, 2 ** 48 - 1]) {
      expect(idTime(ulidTimePrefix(at))).toBe(at);
      expect(idTime(`evt_${ulidTimePrefix(at)}0000000000000000`)).toBe(at);
    }
    expect(idTime(`rcp_${ulid(1_800_000_000_000)}`)).toBe(1_800_000_000_000);
  });
});
