import { createHmac } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import {
  asBuffer,
  constantTimeEqual,
  decodeBase64,
  decodeHex,
  decodeSecret,
  hmac,
  memoizeKeys,
} from "../../src/providers/crypto.js";

describe("hmac", () => {
  it.each(["sha1", "sha256", "sha512"] as const)(
    "%s over parts equals HMAC over the concatenation",
    (algorithm) => {
      const body = new TextEncoder().encode('{"a":1}');
      const expected = createHmac(algorithm, "key").update('123.{"a":1}').digest();
      expect(hmac(algorithm, "key", ["123", ".", body]).equals(expected)).toBe(true);
      expect(hmac(algorithm, Buffer.from("key"), ["123.", body]).equals(expected)).toBe(true);
    },
  );

  it("encodes string parts as UTF-8", () => {
    const expected = createHmac("sha256", "k").update(Buffer.from("é✓", "utf8")).digest();
    expect(hmac("sha256", "k", ["é✓"]).equals(expected)).toBe(true);
  });

  it("with no parts is the HMAC of the empty string", () => {
    expect(hmac("sha256", "k", []).equals(createHmac("sha256", "k").digest())).toBe(true);
  });
});

describe("constantTimeEqual", () => {
  const a = Buffer.from("0123456789abcdef");
  it.each([
    ["equal", a, Buffer.from(a), true],
    ["last byte differs", a, Buffer.from("0123456789abcdeg"), false],
    ["first byte differs", a, Buffer.from("x123456789abcdef"), false],
    ["shorter", a, a.subarray(0, 15), false],
    ["longer", a, Buffer.concat([a, Buffer.from("!")]), false],
    ["prefix of the other", a.subarray(0, 4), a, false],
    ["empty vs empty", Buffer.alloc(0), Buffer.alloc(0), true],
    ["empty vs not", a, Buffer.alloc(0), false],
  ])("%s", (_name, x, y, expected) => {
    expect(constantTimeEqual(x, y)).toBe(expected);
  });

  it("works on Uint8Array views with offsets", () => {
    const backing = new Uint8Array([9, 1, 2, 3, 9]);
    expect(constantTimeEqual(backing.subarray(1, 4), new Uint8Array([1, 2, 3]))).toBe(true);
  });
});

describe("decodeHex", () => {
  it.each([
    ["", ""],
    ["00ff", "00ff"],
    ["ABcd", "abcd"],
  ])("accepts %j", (input, hex) => {
    expect(decodeHex(input)?.toString("hex")).toBe(hex);
  });

  it.each(["0", "abc", "zz", "0g", "g0", "ab cd", " abcd", "abcd ", "0x00", "ab\n", "ａｂ"])(
    "rejects %j",
    (input) => {
      expect(decodeHex(input)).toBeUndefined();
    },
  );
});

describe("decodeBase64", () => {
  it.each([
    ["", ""],
    ["aGk=", "hi"],
    ["aGk/", "hi?"],
    ["aGkh", "hi!"],
    ["AA==", "\u0000"],
  ])("accepts %j", (input, text) => {
    expect(decodeBase64(input)?.toString("latin1")).toBe(text);
  });

  it.each([
    ["missing padding", "aGk"],
    ["URL-safe alphabet", "aGk_"],
    ["URL-safe minus", "-A=="],
    ["non-canonical trailing bits", "AB=="],
    ["whitespace inside", "aG k="],
    ["newline", "aGk=\n"],
    ["too much padding", "a==="],
    ["padding in the middle", "aG==aGk="],
    ["non-base64 characters", "aGk*"],
    ["length not a multiple of 4", "aGk=a"],
    ["full-width characters", "ａＧｋ="],
  ])("rejects %s", (_name, input) => {
    expect(decodeBase64(input)).toBeUndefined();
  });
});

describe("decodeSecret", () => {
  it("decodes each encoding", () => {
    expect(decodeSecret("abc", "utf8")?.toString()).toBe("abc");
    expect(decodeSecret("616263", "hex")?.toString()).toBe("abc");
    expect(decodeSecret("YWJj", "base64")?.toString()).toBe("abc");
  });

  it("rejects secrets that do not decode or are empty", () => {
    expect(decodeSecret("", "utf8")).toBeUndefined();
    expect(decodeSecret("", "hex")).toBeUndefined();
    expect(decodeSecret("", "base64")).toBeUndefined();
    expect(decodeSecret("xyz", "hex")).toBeUndefined();
    expect(decodeSecret("YWJj=", "base64")).toBeUndefined();
  });
});

describe("asBuffer", () => {
  it("shares memory with the view (no copy)", () => {
    const backing = new Uint8Array([1, 2, 3, 4, 5]);
    const view = backing.subarray(1, 4);
    const buf = asBuffer(view);
    expect([...buf]).toEqual([2, 3, 4]);
    backing[2] = 42;
    expect(buf[1]).toBe(42);
  });

  it("returns a Buffer as is", () => {
    const buf = Buffer.from("x");
    expect(asBuffer(buf)).toBe(buf);
  });
});

describe("memoizeKeys", () => {
  it("decodes each secret once, including failures", () => {
    const decode = vi.fn((s: string) => (s === "bad" ? undefined : Buffer.from(s)));
    const keyOf = memoizeKeys(decode);
    expect(keyOf("a")?.toString()).toBe("a");
    expect(keyOf("a")?.toString()).toBe("a");
    expect(keyOf("bad")).toBeUndefined();
    expect(keyOf("bad")).toBeUndefined();
    expect(decode).toHaveBeenCalledTimes(2);
  });

  it("stays bounded", () => {
    const decode = vi.fn((s: string) => Buffer.from(s));
    const keyOf = memoizeKeys(decode, 2);
    keyOf("a");
    keyOf("b");
    keyOf("c"); // clears
    keyOf("a");
    expect(decode).toHaveBeenCalledTimes(4);
  });
});
