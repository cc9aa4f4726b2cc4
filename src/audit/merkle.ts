import { createHash } from "node:crypto";
import { sha256 } from "./sha256.ts";

/**
 * Merkle tree hashing and proofs as in RFC 6962 / RFC 9162 §2.1: SHA-256, leaf hashes prefixed
 * with 0x00, interior nodes with 0x01, the tree over n leaves split at the largest power of two
 * below n. Pure: no I/O. Proofs are built from *perfect subtrees* (2^level leaves starting at a
 * multiple of 2^level), so a store that keeps the hash of each perfect subtree as it closes can
 * answer any head or proof with O(log² n) lookups and never rehashes the log.
 */

/** A perfect subtree: the 2^level leaves starting at leaf `index * 2^level`. Level 0 is a leaf. */
export interface SubtreeId {
  readonly level: number;
  readonly index: number;
}

/** Half-open range of leaf indexes [start, end). */
export interface LeafRange {
  readonly start: number;
  readonly end: number;
}

/**
 * The RFC 6962 leaf hash prefix, 0x00 (PostgreSQL's batch append hashes leaves in SQL with it).
 *
 * @example
 * ```ts
 * leafHash(data).equals(sha256(Buffer.concat([LEAF_PREFIX, data]))); // true
 * ```
 */
export const LEAF_PREFIX = Buffer.from([0]);

/** SHA-256 of nothing: the root of the empty tree. */
export const EMPTY_ROOT: Buffer = createHash("sha256").digest();

/**
 * The RFC 6962 leaf hash: SHA-256(0x00 || data).
 *
 * @example
 * ```ts
 * leafHash(Buffer.alloc(0)).toString("hex"); // "6e340b9c…afa01d"
 * ```
 */
export function leafHash(data: Uint8Array): Buffer {
  const prefixed = Buffer.allocUnsafe(1 + data.length);
  prefixed[0] = 0;
  prefixed.set(data, 1);
  return sha256(prefixed);
}

/**
 * The RFC 6962 interior node hash: SHA-256(0x01 || left || right).
 *
 * @example
 * ```ts
 * nodeHash(leafHash(a), leafHash(b)); // root of the two-leaf tree [a, b]
 * ```
 */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  const node = Buffer.allocUnsafe(1 + left.length + right.length);
  node[0] = 1;
  node.set(left, 1);
  node.set(right, 1 + left.length);
  return sha256(node);
}

/** Largest power of two strictly below n (n ≥ 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The perfect subtrees whose hashes make up MTH(D[start:end]), left to right (largest first on
 * the left, as the RFC's split does). Empty for an empty range.
 *
 * @example
 * ```ts
 * rangeSubtrees({ start: 0, end: 6 }); // [{ level: 2, index: 0 }, { level: 1, index: 2 }]
 * ```
 */
export function rangeSubtrees(range: LeafRange): SubtreeId[] {
  const out: SubtreeId[] = [];
  let { start } = range;
  const { end } = range;
  while (start < end) {
    const size = end - start;
    // The RFC splits at the largest power of two below `size`; the left part is then perfect
    // when `start` is aligned to it, which holds for every range a proof asks for.
    let level = 0;
    while (2 ** (level + 1) <= size && start % 2 ** (level + 1) === 0) level++;
    out.push({ level, index: start / 2 ** level });
    start += 2 ** level;
  }
  return out;
}

/**
 * Folds perfect-subtree hashes (left to right, as {@link rangeSubtrees} lists them) into the
 * range's Merkle tree hash: right to left, as the RFC's recursion does.
 *
 * @example
 * ```ts
 * foldSubtrees([h0123, h45]); // nodeHash(h0123, h45)
 * ```
 */
export function foldSubtrees(hashes: readonly Uint8Array[]): Buffer {
  if (hashes.length === 0) return EMPTY_ROOT;
  let acc: Buffer = Buffer.from(hashes[hashes.length - 1]!);
  for (let i = hashes.length - 2; i >= 0; i--) acc = nodeHash(hashes[i]!, acc);
  return acc;
}

/**
 * The ranges whose hashes form the inclusion proof of leaf `index` in a tree of `size` leaves
 * (RFC 6962 §2.1.1 PATH), bottom-up (the order the proof lists them).
 *
 * @example
 * ```ts
 * inclusionRanges(2, 3); // [{ start: 0, end: 2 }]
 * ```
 */
export function inclusionRanges(index: number, size: number): LeafRange[] {
  if (!(index >= 0 && index < size))
    throw new RangeError(`leaf ${index} is not in a tree of ${size}`);
  const path: LeafRange[] = [];
  let start = 0;
  let end = size;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (index < start + k) {
      path.push({ start: start + k, end });
      end = start + k;
    } else {
      path.push({ start, end: start + k });
      start += k;
    }
  }
  return path.reverse();
}

/**
 * The ranges whose hashes form the consistency proof from a tree of `m` leaves to one of `n`
 * (RFC 6962 §2.1.2 PROOF / SUBPROOF), in proof order. Empty when m = n or m = 0.
 *
 * @example
 * ```ts
 * consistencyRanges(2, 5); // [{ start: 2, end: 4 }, { start: 4, end: 5 }]
 * ```
 */
export function consistencyRanges(m: number, n: number): LeafRange[] {
  if (!(m >= 0 && m <= n)) throw new RangeError(`no consistency proof from ${m} to ${n}`);
  if (m === 0 || m === n) return [];
  const out: LeafRange[] = [];
  const sub = (mm: number, start: number, end: number, complete: boolean): void => {
    const size = end - start;
    if (mm === size) {
      if (!complete) out.push({ start, end });
      return;
    }
    const k = splitPoint(size);
    if (mm <= k) {
      sub(mm, start, start + k, complete);
      out.push({ start: start + k, end });
    } else {
      sub(mm - k, start + k, end, false);
      out.push({ start, end: start + k });
    }
  };
  sub(m, 0, n, true);
  return out;
}

/** Key of a subtree in a lookup map. */
export function subtreeKey(id: SubtreeId): string {
  return `${id.level}:${id.index}`;
}

/**
 * Every distinct perfect subtree needed to hash the given ranges: what a store fetches (in one
 * query) before {@link hashRanges} assembles a head or a proof.
 *
 * @example
 * ```ts
 * subtreesFor(inclusionRanges(5, 8)); // [{ level: 0, index: 4 }, { level: 1, index: 3 }, …]
 * ```
 */
export function subtreesFor(ranges: readonly LeafRange[]): SubtreeId[] {
  const seen = new Map<string, SubtreeId>();
  for (const r of ranges) for (const id of rangeSubtrees(r)) seen.set(subtreeKey(id), id);
  return [...seen.values()];
}

/**
 * Hashes each range from a map of perfect-subtree hashes keyed by {@link subtreeKey}.
 * Throws when one is missing (a store that lost a node row).
 *
 * @example
 * ```ts
 * const [root] = hashRanges([{ start: 0, end: size }], nodes);
 * ```
 */
export function hashRanges(
  ranges: readonly LeafRange[],
  nodes: ReadonlyMap<string, Uint8Array>,
): Buffer[] {
  return ranges.map((r) =>
    foldSubtrees(
      rangeSubtrees(r).map((id) => {
        const h = nodes.get(subtreeKey(id));
        if (!h) throw new Error(`missing audit node ${subtreeKey(id)}`);
        return h;
      }),
    ),
  );
}

/**
 * Perfect-subtree hashes computed from an in-memory list of leaf hashes: for tests and for small
 * trees built outside a store.
 *
 * @example
 * ```ts
 * const nodes = subtreeHashesOf(leaves, subtreesFor([{ start: 0, end: leaves.length }]));
 * ```
 */
export function subtreeHashesOf(
  leafHashes: readonly Uint8Array[],
  ids: readonly SubtreeId[],
): Map<string, Buffer> {
  const memo = new Map<string, Buffer>();
  const hashOf = (level: number, index: number): Buffer => {
    const key = `${level}:${index}`;
    const known = memo.get(key);
    if (known) return known;
    const leaf = leafHashes[index];
    const h =
      level === 0
        ? Buffer.from(leaf ?? fail(index))
        : nodeHash(hashOf(level - 1, index * 2), hashOf(level - 1, index * 2 + 1));
    memo.set(key, h);
    return h;
  };
  const out = new Map<string, Buffer>();
  for (const id of ids) out.set(subtreeKey(id), hashOf(id.level, id.index));
  return out;
}

function fail(index: number): never {
  throw new RangeError(`no leaf ${index}`);
}

/**
 * MTH of a list of leaf hashes (RFC 6962 §2.1).
 *
 * @example
 * ```ts
 * treeRoot([]).equals(EMPTY_ROOT); // true
 * ```
 */
export function treeRoot(leafHashes: readonly Uint8Array[]): Buffer {
  const ranges = [{ start: 0, end: leafHashes.length }];
  return hashRanges(ranges, subtreeHashesOf(leafHashes, subtreesFor(ranges)))[0]!;
}

/**
 * The inclusion proof of leaf `index` in the tree of all given leaf hashes.
 *
 * @example
 * ```ts
 * inclusionProof(leaves, 5); // three hashes for eight leaves
 * ```
 */
export function inclusionProof(leafHashes: readonly Uint8Array[], index: number): Buffer[] {
  const ranges = inclusionRanges(index, leafHashes.length);
  return hashRanges(ranges, subtreeHashesOf(leafHashes, subtreesFor(ranges)));
}

/**
 * The consistency proof from the first `m` of the given leaf hashes to all of them.
 *
 * @example
 * ```ts
 * consistencyProof(leaves, 6); // proof from size 6 to leaves.length
 * ```
 */
export function consistencyProof(leafHashes: readonly Uint8Array[], m: number): Buffer[] {
  const ranges = consistencyRanges(m, leafHashes.length);
  return hashRanges(ranges, subtreeHashesOf(leafHashes, subtreesFor(ranges)));
}

/**
 * The walk shared by RFC 9162's two verification algorithms: for each path element, tells
 * `visit` whether it is a left sibling (hash it before the running value) or a right one, while
 * shifting the node index `fn` and the last index `sn` up the tree. True when the path ends
 * exactly at the root (sn reaches 0 with nothing left over).
 */
function climb(
  fn: number,
  sn: number,
  path: readonly Uint8Array[],
  visit: (sibling: Uint8Array, isLeft: boolean) => void,
): boolean {
  for (const p of path) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      visit(p, true);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      visit(p, false);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0;
}

/**
 * RFC 9162 §2.1.3.2: does `proof` show leaf hash `leaf` at `index` in the tree of `size` leaves
 * with root `root`?
 *
 * @example
 * ```ts
 * verifyInclusion(5, 8, leafHash(data), proof, root); // true or false, never throws
 * ```
 */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!(Number.isSafeInteger(index) && Number.isSafeInteger(size) && index >= 0 && index < size))
    return false;
  let r: Buffer = Buffer.from(leaf);
  const ends = climb(index, size - 1, proof, (p, isLeft) => {
    r = isLeft ? nodeHash(p, r) : nodeHash(r, p);
  });
  return ends && r.equals(Buffer.from(root));
}

/**
 * RFC 9162 §2.1.4.2: does `proof` show that the tree of `m` leaves with root `rootM` is a prefix
 * of the tree of `n` leaves with root `rootN`?
 *
 * @example
 * ```ts
 * verifyConsistency(6, 8, root6, root8, proof); // true or false, never throws
 * ```
 */
export function verifyConsistency(
  m: number,
  n: number,
  rootM: Uint8Array,
  rootN: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!(Number.isSafeInteger(m) && Number.isSafeInteger(n) && m >= 0 && m <= n)) return false;
  const first = Buffer.from(rootM);
  const second = Buffer.from(rootN);
  if (m === n) return proof.length === 0 && first.equals(second);
  if (m === 0) return proof.length === 0;
  // Step 2: when m is a power of two, the first tree's root is the first node of the path.
  const path = (m & (m - 1)) === 0 ? [first, ...proof] : [...proof];
  if (path.length === 0) return false;
  let fn = m - 1;
  let sn = n - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr: Buffer = Buffer.from(path[0]!);
  let sr: Buffer = Buffer.from(path[0]!);
  const ends = climb(fn, sn, path.slice(1), (c, isLeft) => {
    if (isLeft) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
    } else {
      sr = nodeHash(sr, c);
    }
  });
  return ends && fr.equals(first) && sr.equals(second);
}
