import { createHash } from "node:crypto";

/**
 * What one audit leaf commits to: an event as it was accepted. The leaf's bytes are
 * {@link encodeLeaf} of these fields and its hash is RFC 6962's `SHA-256(0x00 || bytes)`.
 */
export interface LeafFields {
  /** 0-based position in the log (the leaf index). */
  readonly seq: number;
  readonly source: string;
  readonly dedupKey: string;
  /** The event's received_at, integer ms since the epoch. */
  readonly receivedAt: number;
  /** SHA-256 of the raw body bytes, 32 bytes. */
  readonly bodySha256: Uint8Array;
  /** SHA-256 of {@link canonicalHeaders}, 32 bytes. */
  readonly headersSha256: Uint8Array;
}

/** Format version, the leaf's first byte: a later encoding gets a new one. */
export const LEAF_VERSION = 1;

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

function i64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
}

/** A string as a 4-byte big-endian byte length followed by its UTF-8 bytes. */
function text(value: string): Buffer {
  const bytes = Buffer.from(value, "utf8");
  return Buffer.concat([u32(bytes.length), bytes]);
}

/**
 * The canonical bytes of stored headers (pairs in arrival order, names as sent): for each pair,
 * the name then the value, each as a 4-byte big-endian length and UTF-8 bytes. Nothing is
 * lower-cased, sorted or trimmed: the headers are kept verbatim, so they are hashed verbatim.
 *
 * @example
 * ```ts
 * canonicalHeaders([["Stripe-Signature", "t=1,v1=ab"]]); // <00 00 00 10 "Stripe-Signature" 00 00 00 09 "t=1,v1=ab">
 * ```
 */
export function canonicalHeaders(headers: ReadonlyArray<readonly [string, string]>): Buffer {
  return Buffer.concat(headers.flatMap(([name, value]) => [text(name), text(value)]));
}

/**
 * SHA-256 of bytes.
 *
 * @example
 * ```ts
 * sha256(Buffer.from("{}")).length; // 32
 * ```
 */
export function sha256(bytes: Uint8Array): Buffer {
  return createHash("sha256").update(bytes).digest();
}

/**
 * The leaf's bytes, exactly (so an auditor can recompute it):
 *
 * | bytes | field |
 * |---|---|
 * | 1 | version, `0x01` |
 * | 8 | seq, unsigned big-endian |
 * | 4 + n | source: byte length (u32 BE) + UTF-8 |
 * | 4 + n | dedup key: byte length (u32 BE) + UTF-8 |
 * | 8 | received_at, ms since the epoch, signed big-endian |
 * | 32 | SHA-256 of the raw body |
 * | 32 | SHA-256 of the canonical headers |
 *
 * @example
 * ```ts
 * leafHash(encodeLeaf(fields)); // the hash stored in audit_leaves
 * ```
 */
export function encodeLeaf(fields: LeafFields): Buffer {
  if (fields.bodySha256.length !== 32 || fields.headersSha256.length !== 32) {
    throw new RangeError("leaf digests must be 32 bytes");
  }
  return Buffer.concat([
    Buffer.from([LEAF_VERSION]),
    u64(fields.seq),
    text(fields.source),
    text(fields.dedupKey),
    i64(Math.floor(fields.receivedAt)),
    Buffer.from(fields.bodySha256),
    Buffer.from(fields.headersSha256),
  ]);
}

/** An event as stored: what the leaf is recomputed from. */
export interface StoredEventForLeaf {
  readonly source: string;
  readonly dedupKey: string;
  readonly receivedAt: number;
  readonly body: Uint8Array;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** For a purged event: the digests it had (body and headers are then empty). */
  readonly purged?: { readonly bodySha256: Uint8Array; readonly headersSha256: Uint8Array } | null;
}

/**
 * The leaf fields of a stored event at position `seq`.
 *
 * @example
 * ```ts
 * leafHash(encodeLeaf(leafFieldsOf(0, event)));
 * ```
 */
export function leafFieldsOf(seq: number, event: StoredEventForLeaf): LeafFields {
  // The kept digests stand in only for an emptied payload: a body put back into a purged row is
  // hashed as it is, so it cannot pass for the one the leaf committed to.
  const purged =
    event.body.length === 0 && event.headers.length === 0 ? (event.purged ?? null) : null;
  return {
    seq,
    source: event.source,
    dedupKey: event.dedupKey,
    receivedAt: event.receivedAt,
    bodySha256: purged?.bodySha256 ?? sha256(event.body),
    headersSha256: purged?.headersSha256 ?? sha256(canonicalHeaders(event.headers)),
  };
}
