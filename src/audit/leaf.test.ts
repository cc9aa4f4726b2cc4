import { describe, expect, it } from "vitest";
import { canonicalHeaders, encodeLeaf, leafFieldsOf, sha256 } from "./leaf.ts";
import { leafHash } from "./merkle.ts";

// A fixed byte-for-byte vector of the leaf encoding (the same one is in docs/audit.md, and was
// checked against an independent encoder written from that table), so the encoding cannot change
// silently: every stored leaf and every saved head depends on it.

const body = Buffer.from('{"id":"evt_1"}');
const headers: Array<[string, string]> = [
  ["Content-Type", "application/json"],
  ["Stripe-Signature", "t=1,v1=ab"],
];
const event = { source: "stripe", dedupKey: "evt_1", receivedAt: 1_767_225_600_000, body, headers };

describe("leaf encoding vector", () => {
  it("encodes and hashes the documented leaf exactly", () => {
    expect(canonicalHeaders(headers).toString("hex")).toBe(
      "0000000c436f6e74656e742d54797065000000106170706c69636174696f6e2f6a736f6e" +
        "000000105374726970652d5369676e617475726500000009743d312c76313d6162",
    );
    expect(sha256(body).toString("hex")).toBe(
      "40993c639ffb5f13a0a2ef5c93c965f10b405f2b87a379272381da2dbc158dfa",
    );
    const bytes = encodeLeaf(leafFieldsOf(7, event));
    expect(bytes.length).toBe(100);
    expect(bytes.toString("hex")).toBe(
      "01" + // version
        "0000000000000007" + // seq 7
        "00000006" +
        "737472697065" + // "stripe"
        "00000005" +
        "6576745f31" + // "evt_1"
        "0000019b76daa800" + // 2026-01-01T00:00:00.000Z in ms
        "40993c639ffb5f13a0a2ef5c93c965f10b405f2b87a379272381da2dbc158dfa" + // body SHA-256
        "4692f86f4cefd29a5977491200961c62b3b32cd14eba72315fd7861625300099", // headers SHA-256
    );
    expect(leafHash(bytes).toString("hex")).toBe(
      "43e4f0f0cb6958e78ce230db77ddcd63ead2deae7481a5ff8a635a21873517f4",
    );
  });

  it("a purged event's kept digests give the same leaf", () => {
    const purged = {
      ...event,
      body: Buffer.alloc(0),
      headers: [],
      purged: { bodySha256: sha256(body), headersSha256: sha256(canonicalHeaders(headers)) },
    };
    expect(leafHash(encodeLeaf(leafFieldsOf(7, purged))).toString("hex")).toBe(
      "43e4f0f0cb6958e78ce230db77ddcd63ead2deae7481a5ff8a635a21873517f4",
    );
  });
});

// The encoder writes into one buffer it sizes itself; this is the table of docs/audit.md written
// the plain way (a Buffer per field, BigInt for the 8-byte integers), to compare with it.
const u32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
const text = (s: string) => Buffer.concat([u32(Buffer.byteLength(s)), Buffer.from(s, "utf8")]);
const int64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
};

describe("leaf encoding against a plain encoder", () => {
  it("200 leaves with non-ASCII text, large indexes and times before 1970 encode the same", () => {
    const words = [
      "stripe",
      "Ünïcødé",
      "😀 emoji",
      "",
      "a\u0000b",
      "日本語のキー",
      "x".repeat(300),
    ];
    for (let i = 0; i < 200; i++) {
      const pick = (k: number) => words[(i * k) % words.length] as string;
      const hdrs: Array<[string, string]> = Array.from({ length: i % 5 }, (_, k) => [
        pick(k + 2),
        pick(k + 3),
      ]);
      const seq = i % 2 ? 2 ** 40 + i : i;
      const receivedAt = i % 3 ? 1_767_225_600_000 + i : -1_000_000 * i - 1;
      const fields = leafFieldsOf(seq, {
        source: pick(1),
        dedupKey: pick(5),
        receivedAt,
        body: Buffer.from(pick(7)),
        headers: hdrs,
      });
      expect(canonicalHeaders(hdrs)).toEqual(
        Buffer.concat(hdrs.flatMap(([n, v]) => [text(n), text(v)])),
      );
      expect(encodeLeaf(fields)).toEqual(
        Buffer.concat([
          Buffer.from([1]),
          int64(seq),
          text(pick(1)),
          text(pick(5)),
          int64(receivedAt),
          sha256(Buffer.from(pick(7))),
          sha256(Buffer.concat(hdrs.flatMap(([n, v]) => [text(n), text(v)]))),
        ]),
      );
    }
  });
});
