import { foldSubtrees, nodeHash, type SubtreeId } from "./merkle.ts";

/**
 * The right edge of a Merkle tree: the hashes of the perfect subtrees that make up its leaves
 * (one per set bit of the size, largest first). It is all an append needs: no other node is
 * read. Stored in the tree row as concatenated 32-byte hashes.
 */
export interface CompactRange {
  readonly size: number;
  readonly hashes: readonly Buffer[];
}

/** A perfect subtree that closed on an append, to store for later heads and proofs. */
export interface ClosedSubtree extends SubtreeId {
  readonly hash: Buffer;
}

/** The empty tree. */
export const EMPTY_RANGE: CompactRange = { size: 0, hashes: [] };

/**
 * Appends one leaf hash: returns the new range and the subtrees it closed, level ≥ 1 (on
 * average one per append: as many as the trailing one bits of the old size).
 *
 * @example
 * ```ts
 * const { range, closed } = appendToRange(EMPTY_RANGE, leafHash(bytes)); // closed: []
 * ```
 */
export function appendToRange(
  range: CompactRange,
  leaf: Buffer,
): { range: CompactRange; closed: ClosedSubtree[] } {
  const hashes = [...range.hashes];
  const closed: ClosedSubtree[] = [];
  let cur = leaf;
  let level = 0;
  while ((range.size >> level) & 1) {
    cur = nodeHash(hashes.pop()!, cur);
    level++;
    closed.push({ level, index: (range.size + 1) / 2 ** level - 1, hash: cur });
  }
  hashes.push(cur);
  return { range: { size: range.size + 1, hashes }, closed };
}

/**
 * The root hash of the tree a compact range describes.
 *
 * @example
 * ```ts
 * rangeRoot(EMPTY_RANGE); // SHA-256 of nothing
 * ```
 */
export function rangeRoot(range: CompactRange): Buffer {
  return foldSubtrees(range.hashes);
}

/**
 * Decodes a stored range (size plus concatenated 32-byte hashes).
 *
 * @example
 * ```ts
 * decodeRange(row.size, row.frontier);
 * ```
 */
export function decodeRange(size: number, frontier: Uint8Array): CompactRange {
  const hashes: Buffer[] = [];
  for (let at = 0; at < frontier.length; at += 32) {
    hashes.push(Buffer.from(frontier.subarray(at, at + 32)));
  }
  return { size, hashes };
}

/**
 * Encodes a range's hashes for the tree row.
 *
 * @example
 * ```ts
 * encodeRange(range).length; // 32 × (set bits of range.size)
 * ```
 */
export function encodeRange(range: CompactRange): Buffer {
  return Buffer.concat(range.hashes);
}
