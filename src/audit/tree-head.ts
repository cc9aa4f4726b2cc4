import { createPublicKey, type KeyObject, sign, verify } from "node:crypto";
import type { StoredTreeHead } from "../store/audit-types.ts";

/** Domain separation: the signed bytes start with this, so the key signs nothing else by accident. */
const HEAD_CONTEXT = Buffer.from("hookinbox tree head v1\0", "utf8");

/**
 * The exact bytes an Ed25519 tree-head signature covers: the ASCII text
 * `hookinbox tree head v1` and a zero byte, then the tree size (8 bytes, unsigned big-endian),
 * the timestamp (ms since the epoch, 8 bytes, unsigned big-endian) and the 32-byte root hash.
 *
 * @example
 * ```ts
 * encodeTreeHead({ size: 8, signedAt: 1767225600000, root }).length; // 23 + 8 + 8 + 32
 * ```
 */
export function encodeTreeHead(head: { size: number; signedAt: number; root: Uint8Array }): Buffer {
  const numbers = Buffer.alloc(16);
  numbers.writeBigUInt64BE(BigInt(head.size), 0);
  numbers.writeBigUInt64BE(BigInt(head.signedAt), 8);
  return Buffer.concat([HEAD_CONTEXT, numbers, Buffer.from(head.root)]);
}

/**
 * The raw 32-byte Ed25519 public key of a key object (private or public), as hex.
 *
 * @example
 * ```ts
 * publicKeyHex(privateKey); // "3b6a27bc…" (64 hex digits)
 * ```
 */
export function publicKeyHex(key: KeyObject): string {
  const spki = createPublicKey(key).export({ format: "der", type: "spki" });
  return spki.subarray(spki.length - 32).toString("hex");
}

/** The SPKI DER prefix of an Ed25519 public key (RFC 8410); the raw 32 bytes follow. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/**
 * A public key object from the raw 32-byte key in hex.
 *
 * @example
 * ```ts
 * verifyTreeHead(head, publicKeyFromHex(head.publicKey));
 * ```
 */
export function publicKeyFromHex(hex: string): KeyObject {
  const raw = Buffer.from(hex, "hex");
  if (raw.length !== 32 || !/^[0-9a-f]{64}$/i.test(hex)) {
    throw new RangeError("an Ed25519 public key is 64 hex digits");
  }
  return createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, raw]),
    format: "der",
    type: "spki",
  });
}

/**
 * Signs a tree state with an Ed25519 private key.
 *
 * @example
 * ```ts
 * const head = signTreeHead(privateKey, { size, root }, Date.now());
 * ```
 */
export function signTreeHead(
  privateKey: KeyObject,
  tree: { size: number; root: Buffer },
  signedAt: number,
): StoredTreeHead {
  const at = Math.floor(signedAt);
  return {
    size: tree.size,
    root: tree.root,
    signedAt: at,
    publicKey: publicKeyHex(privateKey),
    signature: sign(
      null,
      encodeTreeHead({ size: tree.size, signedAt: at, root: tree.root }),
      privateKey,
    ),
  };
}

/**
 * Checks a head's signature with a trusted public key (not the one the head names: a forger
 * would name their own).
 *
 * @example
 * ```ts
 * verifyTreeHead(head, publicKeyFromHex(trustedKeyHex)); // true or false
 * ```
 */
export function verifyTreeHead(head: StoredTreeHead, trusted: KeyObject): boolean {
  try {
    return verify(null, encodeTreeHead(head), trusted, head.signature);
  } catch {
    return false;
  }
}

/** A tree head as JSON: hex hashes and key, base64 signature, ISO time beside the ms. */
export interface TreeHeadJson {
  readonly size: number;
  readonly rootHash: string;
  readonly timestamp: number;
  readonly signedAt: string;
  readonly publicKey: string;
  readonly signature: string;
}

/**
 * The JSON form of a head (what the API serves, the CLI prints and witnesses receive).
 *
 * @example
 * ```ts
 * JSON.stringify(treeHeadJson(head));
 * ```
 */
export function treeHeadJson(head: StoredTreeHead): TreeHeadJson {
  return {
    size: head.size,
    rootHash: head.root.toString("hex"),
    timestamp: head.signedAt,
    signedAt: new Date(head.signedAt).toISOString(),
    publicKey: head.publicKey,
    signature: head.signature.toString("base64"),
  };
}

/**
 * Reads a head from its JSON form; null when a field is missing or malformed.
 *
 * @example
 * ```ts
 * const head = parseTreeHeadJson(JSON.parse(await readFile("head.json", "utf8")));
 * ```
 */
export function parseTreeHeadJson(value: unknown): StoredTreeHead | null {
  const v = value as Partial<Record<keyof TreeHeadJson, unknown>> | null;
  if (
    !v ||
    typeof v.size !== "number" ||
    !Number.isSafeInteger(v.size) ||
    v.size < 0 ||
    typeof v.rootHash !== "string" ||
    !/^[0-9a-f]{64}$/i.test(v.rootHash) ||
    typeof v.timestamp !== "number" ||
    typeof v.publicKey !== "string" ||
    typeof v.signature !== "string"
  ) {
    return null;
  }
  return {
    size: v.size,
    root: Buffer.from(v.rootHash, "hex"),
    signedAt: v.timestamp,
    publicKey: v.publicKey,
    signature: Buffer.from(v.signature, "base64"),
  };
}
