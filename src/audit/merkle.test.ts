import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  consistencyProof,
  inclusionProof,
  leafHash,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
} from "./merkle.ts";

// The Certificate Transparency reference vectors (RFC 6962 test data, as used by certificate-
// transparency-go's merkle tests): eight leaves, the roots of every prefix, and sample proofs.
const LEAVES = [
  "",
  "00",
  "10",
  "2021",
  "3031",
  "40414243",
  "5051525354555657",
  "606162636465666768696a6b6c6d6e6f",
].map((hex) => Buffer.from(hex, "hex"));
const ROOTS = [
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];
const H = {
  a: "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
  b: "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
  c: "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
  d: "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
  e: "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
  f: "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  g: "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
};
const INCLUSION: [number, number, string[]][] = [
  [0, 8, [H.a, H.b, H.c]],
  [5, 8, [H.d, H.e, H.f]],
  [2, 3, [ROOTS[2]!]],
  [1, 5, [ROOTS[1]!, H.b, H.d]],
];
const CONSISTENCY: [number, number, string[]][] = [
  [1, 1, []],
  [1, 8, [H.a, H.b, H.c]],
  [6, 8, [H.g, H.e, H.f]],
  [2, 5, [H.b, H.d]],
];

const leafHashes = LEAVES.map(leafHash);
const hex = (bufs: Buffer[]) => bufs.map((b) => b.toString("hex"));
const bufs = (hexes: string[]) => hexes.map((h) => Buffer.from(h, "hex"));
const root = (size: number) => Buffer.from(ROOTS[size]!, "hex");

describe("RFC 6962 reference vectors", () => {
  it("gives the root of every prefix of the eight leaves", () => {
    for (let size = 0; size <= 8; size++) {
      expect(treeRoot(leafHashes.slice(0, size)).toString("hex")).toBe(ROOTS[size]);
    }
  });

  it.each(INCLUSION)("builds and verifies the inclusion proof of leaf %i in %i", (i, n, path) => {
    expect(hex(inclusionProof(leafHashes.slice(0, n), i))).toEqual(path);
    expect(verifyInclusion(i, n, leafHashes[i]!, bufs(path), root(n))).toBe(true);
  });

  it.each(CONSISTENCY)("builds and verifies the consistency proof %i → %i", (m, n, path) => {
    expect(hex(consistencyProof(leafHashes.slice(0, n), m))).toEqual(path);
    expect(verifyConsistency(m, n, root(m), root(n), bufs(path))).toBe(true);
  });

  it("rejects a proof checked against the wrong index, size or root", () => {
    const [i, n, path] = INCLUSION[1]!;
    expect(verifyInclusion(i + 1, n, leafHashes[i]!, bufs(path), root(n))).toBe(false);
    expect(verifyInclusion(i, n - 2, leafHashes[i]!, bufs(path), root(n - 2))).toBe(false);
    expect(verifyInclusion(i, n, leafHashes[i]!, bufs(path), root(n - 1))).toBe(false);
    expect(verifyInclusion(n, n, leafHashes[i]!, bufs(path), root(n))).toBe(false);
    const [m, n2, cpath] = CONSISTENCY[2]!;
    expect(verifyConsistency(m, n2, root(m - 1), root(n2), bufs(cpath))).toBe(false);
    expect(verifyConsistency(m, n2, root(m), root(n2 - 1), bufs(cpath))).toBe(false);
    expect(verifyConsistency(m - 1, n2, root(m), root(n2), bufs(cpath))).toBe(false);
    expect(verifyConsistency(n2, m, root(n2), root(m), bufs(cpath))).toBe(false);
    expect(verifyConsistency(1, 1, root(1), root(1), bufs([H.a]))).toBe(false);
  });
});

/** Distinct leaves: leaf i is the 4-byte big-endian i plus a seed byte. */
function leavesOf(size: number, seed: number): Buffer[] {
  return Array.from({ length: size }, (_, i) => {
    const b = Buffer.alloc(5);
    b.writeUInt32BE(i);
    b[4] = seed;
    return leafHash(b);
  });
}

/** Flips one bit of one proof element, or drops/duplicates one, or changes the leaf or root. */
function mutate(
  proof: Buffer[],
  leaf: Buffer,
  rootHash: Buffer,
  pick: number,
  bit: number,
): { proof: Buffer[]; leaf: Buffer; root: Buffer } {
  const flip = (b: Buffer) => {
    const c = Buffer.from(b);
    c[bit % 32] = c[bit % 32]! ^ (1 << (bit % 8));
    return c;
  };
  const kind = pick % 5;
  const at = proof.length === 0 ? 0 : pick % proof.length;
  if (kind === 0 && proof.length > 0)
    return { proof: proof.map((p, j) => (j === at ? flip(p) : p)), leaf, root: rootHash };
  if (kind === 1 && proof.length > 0)
    return { proof: proof.filter((_, j) => j !== at), leaf, root: rootHash };
  if (kind === 2) return { proof: [...proof, proof[at] ?? leaf], leaf, root: rootHash };
  if (kind === 3) return { proof, leaf: flip(leaf), root: rootHash };
  return { proof, leaf, root: flip(rootHash) };
}

/** A tree size, an index within it (reduced modulo the size) and a mutation choice. */
const sizeIndexMutation = [fc.integer({ min: 1, max: 300 }), fc.nat(), fc.nat(), fc.nat()] as const;

describe("properties", () => {
  it("every leaf's proof verifies and every single mutation fails, sizes 1..70", () => {
    let checked = 0;
    for (let size = 1; size <= 70; size++) {
      const leaves = leavesOf(size, size);
      const r = treeRoot(leaves);
      for (let i = 0; i < size; i++) {
        const proof = inclusionProof(leaves, i);
        expect(verifyInclusion(i, size, leaves[i]!, proof, r)).toBe(true);
        checked++;
      }
    }
    expect(checked).toBe((70 * 71) / 2);
  });

  it("a mutated inclusion proof, leaf or root never verifies", () => {
    fc.assert(
      fc.property(...sizeIndexMutation, (size, rawIndex, pick, bit) => {
        const leaves = leavesOf(size, 1);
        const i = rawIndex % size;
        const m = mutate(inclusionProof(leaves, i), leaves[i]!, treeRoot(leaves), pick, bit);
        expect(verifyInclusion(i, size, m.leaf, m.proof, m.root)).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it("every consistency proof verifies and a mutated one never does", () => {
    fc.assert(
      fc.property(...sizeIndexMutation, (n, rawM, pick, bit) => {
        const leaves = leavesOf(n, 2);
        const m = 1 + (rawM % n);
        const proof = consistencyProof(leaves, m);
        const rm = treeRoot(leaves.slice(0, m));
        const rn = treeRoot(leaves);
        expect(verifyConsistency(m, n, rm, rn, proof)).toBe(true);
        const bad = mutate(proof, rm, rn, pick, bit);
        // kind 3 flips the old root, kind 4 the new one; 0–2 change the path.
        expect(verifyConsistency(m, n, bad.leaf, bad.root, bad.proof)).toBe(false);
      }),
      { numRuns: 400 },
    );
  });
});
