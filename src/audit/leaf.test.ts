import { describe, expect, it } from "vitest";
import { encodeFirstReceiptLeaf } from "./first-receipt-leaf.ts";
import { canonicalHeaders, encodeLeaf, leafFieldsOf, sha256 } from "./leaf.ts";
import { leafHash } from "./merkle.ts";
import { encodeRetentionLeaf, retentionLeafHashOf } from "./retention-leaf.ts";
import { parseRetentionLeafId, retentionLeafId } from "./retention-record.ts";

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

// Fixed vectors of the version-2 encodings (the same in docs/audit.md, computed by an independent
// encoder written from its tables): a new event's leaf with its first receipt, and a retention
// record.
describe("version-2 leaf vectors", () => {
  it("encodes and hashes a new event's leaf (kind 1) exactly", () => {
    const bytes = encodeFirstReceiptLeaf({
      ...leafFieldsOf(7, event),
      receiptId: "rcp_1",
      remoteAddress: "203.0.113.9",
      secretIndex: 0,
    });
    expect(bytes.length).toBe(135);
    expect(bytes.toString("hex")).toBe(
      "02" + // version
        "0000000000000007" + // seq 7
        "01" + // kind: an event and its first receipt
        "00000005" +
        "7263705f31" + // "rcp_1"
        "00000006" +
        "737472697065" + // "stripe"
        "00000005" +
        "6576745f31" + // "evt_1"
        "0000019b76daa800" + // 2026-01-01T00:00:00.000Z in ms
        "01" +
        "0000000b" +
        "3230332e302e3131332e39" + // remote address "203.0.113.9"
        "01" +
        "0000000000000000" + // secret index 0
        "40993c639ffb5f13a0a2ef5c93c965f10b405f2b87a379272381da2dbc158dfa" + // body SHA-256
        "4692f86f4cefd29a5977491200961c62b3b32cd14eba72315fd7861625300099", // headers SHA-256
    );
    expect(leafHash(bytes).toString("hex")).toBe(
      "50ef1dd9a2223cabbf1e228a09f258cfed3371a2b351e7b7f5f7ec4e9363b549",
    );
  });

  it("encodes and hashes a retention leaf (kind 3) exactly", () => {
    const fields = {
      seq: 120,
      kind: "events",
      firstId: "evt_1",
      lastId: "evt_9",
      removed: 500,
      cut: 1_767_225_600_000,
    } as const;
    const bytes = encodeRetentionLeaf(fields);
    expect(bytes.length).toBe(45);
    expect(bytes.toString("hex")).toBe(
      "02" + // version
        "0000000000000078" + // seq 120
        "03" + // kind: a retention record
        "01" + // events
        "00000005" +
        "6576745f31" + // first id "evt_1"
        "00000005" +
        "6576745f39" + // last id "evt_9"
        "00000000000001f4" + // 500 rows
        "0000019b76daa800", // cut 2026-01-01T00:00:00.000Z in ms
    );
    expect(leafHash(bytes).toString("hex")).toBe(
      "adad97b1ad1f40513c7596eb98108f8d4ebb27d9dd51c2b36ca298d4855562dd",
    );
    expect(retentionLeafHashOf(fields)).toEqual(leafHash(bytes));
    const id = retentionLeafId("01KDYAK3SE27WQ94W3D9Y67KTJ", fields);
    expect(id).toBe("ret_01KDYAK3SE27WQ94W3D9Y67KTJ/events/evt_1/evt_9/500/1767225600000");
    expect(parseRetentionLeafId(id)).toEqual({
      kind: "events",
      firstId: "evt_1",
      lastId: "evt_9",
      removed: 500,
      cut: 1_767_225_600_000,
    });
  });
});
