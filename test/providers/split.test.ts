import { describe, expect, it } from "vitest";
import {
  checkPublicUrl,
  field,
  formParams,
  fullUrl,
  keyValueList,
  queryParams,
} from "../../src/providers/body.ts";
import { arrayItemSpans } from "../../src/providers/json-spans.ts";
import { splitJson } from "../../src/providers/split.ts";
import { expectRejected } from "./helpers.js";

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

function texts(body: string, path: string[] = [], itemKey?: string): string[] | undefined {
  const bytes = encode(body);
  return arrayItemSpans(bytes, path, itemKey)?.map((s) => decode(bytes.subarray(s.start, s.end)));
}

describe("arrayItemSpans", () => {
  it.each<[string, string, string[] | undefined, string[]?, string?]>([
    ["a plain array", '[1,"a",{"b":[2]},null]', ["1", '"a"', '{"b":[2]}', "null"]],
    ["whitespace everywhere", ' [ 1 ,\n\t{ "a" : 1 } , [ ] ] ', ["1", '{ "a" : 1 }', "[ ]"]],
    [
      "brackets, commas and escaped quotes inside strings",
      '["a,]}\\"[{", {"k":"]"}]',
      ['"a,]}\\"[{"', '{"k":"]"}'],
    ],
    ["an empty array", "[]", []],
    [
      "a path to a nested array",
      '{"x":{"y":[1]},"items":[{"a":1},{"a":2}]}',
      ['{"a":1}', '{"a":2}'],
      ["items"],
    ],
    [
      "the last duplicate key wins, as in JSON.parse",
      '{"items":[1],"items":[2,3]}',
      ["2", "3"],
      ["items"],
    ],
    ["an escaped key", '{"it\\u0065ms":[7]}', ["7"], ["items"]],
    [
      "an item key inside each element",
      '{"n":[{"I":{"a":1}},{"J":2},{"I":[3]}]}',
      ['{"a":1}', "[3]"],
      ["n"],
      "I",
    ],
    ["a path that is not an array", '{"items":{"a":1}}', undefined, ["items"]],
    ["a missing path", '{"other":[1]}', undefined, ["items"]],
    ["a root that is not an array", '{"a":[1]}', undefined],
    ["truncated input", "[1,", undefined],
  ])("%s", (_name, body, expected, path = [], itemKey = undefined) => {
    expect(texts(body, path, itemKey)).toEqual(expected);
  });

  it("skips a UTF-8 byte-order mark and keeps multi-byte characters intact", () => {
    const bytes = Uint8Array.from([0xef, 0xbb, 0xbf, ...encode('["Zoë 🎉",{"ü":"]"}]')]);
    const spans = arrayItemSpans(bytes, []) ?? [];
    expect(spans.map((s) => decode(bytes.subarray(s.start, s.end)))).toEqual([
      '"Zoë 🎉"',
      '{"ü":"]"}',
    ]);
  });

  it("handles deep nesting without recursion", () => {
    const deep = `[${"[".repeat(100_000)}${"]".repeat(100_000)},1]`;
    expect(arrayItemSpans(encode(deep), [])?.length).toBe(2);
  });
});

describe("splitJson", () => {
  it("copies each item's bytes (later changes to the request body do not leak in)", () => {
    const body = encode('[{"a":1}]');
    const [item] = splitJson(body, []);
    body.fill(0x20);
    expect(decode(item?.body ?? new Uint8Array())).toBe('{"a":1}');
  });

  it("rejects a body that is not JSON", () => {
    expectRejected(() => splitJson(encode("nope"), []), "HOOKINBOX_BODY_INVALID_JSON", 400);
  });
});

describe("body helpers", () => {
  it("field reads own properties of plain objects only", () => {
    expect(field({ a: 1 }, "a")).toBe(1);
    expect(field({}, "constructor")).toBeUndefined();
    expect(field({}, "__proto__")).toBeUndefined();
    expect(field(JSON.parse('{"__proto__":5}'), "__proto__")).toBe(5);
    expect(field([1], "0")).toBeUndefined();
    expect(field(null, "a")).toBeUndefined();
  });

  it("formParams and queryParams decode like a form, keeping a leading ? as data", () => {
    expect([...formParams(encode("a=1&b=x+y%21&a=2"))]).toEqual([
      ["a", "1"],
      ["b", "x y!"],
      ["a", "2"],
    ]);
    expect([...formParams(encode("?a=1"))]).toEqual([["?a", "1"]]);
    expect(queryParams("/p?data.id=AB&x=%20#frag").get("data.id")).toBe("AB");
    expect(queryParams("/p?data.id=AB&x=%20#frag").get("x")).toBe(" ");
    expect([...queryParams("/p")]).toEqual([]);
  });

  it("keyValueList splits on the separator and the first =", () => {
    expect(keyValueList("ts=1; h1=a=b", ";", "h")).toEqual([
      ["ts", "1"],
      ["h1", "a=b"],
    ]);
    expectRejected(
      () => keyValueList("ts=1;;h1=a", ";", "h"),
      "HOOKINBOX_SIGNATURE_MALFORMED",
      400,
    );
    expectRejected(() => keyValueList("=a", ";", "h"), "HOOKINBOX_SIGNATURE_MALFORMED", 400);
  });

  it("checkPublicUrl and fullUrl", () => {
    expect(checkPublicUrl("https://h.example/base//", "publicUrl")).toBe("https://h.example/base");
    expect(fullUrl("https://h.example", "/w?x=1")).toBe("https://h.example/w?x=1");
    expect(fullUrl("https://h.example", "w")).toBe("https://h.example/w");
    expect(() => checkPublicUrl("https://h.example/#x", "publicUrl")).toThrow(/publicUrl/);
  });
});
