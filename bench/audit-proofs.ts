// Proof size and verification time at 10^6 leaves (issue 13): builds a tree of 1,000,000 leaf
// hashes in memory (RFC 6962/9162 hashing, src/audit/merkle.ts), takes inclusion proofs of a
// few leaves and consistency proofs between a few sizes, and prints each proof's bytes and the
// mean verification time over many runs. Run: npm run bench:audit-proofs [-- --leaves N].
import { parseArgs } from "node:util";
import {
  consistencyProof,
  inclusionProof,
  leafHash,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
} from "../src/audit/merkle.ts";

const { values } = parseArgs({ options: { leaves: { type: "string" }, runs: { type: "string" } } });
const n = Number(values.leaves ?? 1_000_000);
const runs = Number(values.runs ?? 20_000);

const built = performance.now();
const leaves = Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
const root = treeRoot(leaves);
console.log(
  `${n} leaves hashed and rooted in ${((performance.now() - built) / 1000).toFixed(1)} s`,
);

const micros = (work: () => boolean): number => {
  const t = performance.now();
  for (let i = 0; i < runs; i++) if (!work()) throw new Error("a proof did not verify");
  return ((performance.now() - t) * 1000) / runs;
};
const bytes = (proof: readonly Uint8Array[]) => proof.reduce((s, h) => s + h.length, 0);

for (const index of [0, Math.floor(n / 2), n - 1]) {
  const proof = inclusionProof(leaves, index);
  const leaf = leaves[index]!;
  const us = micros(() => verifyInclusion(index, n, leaf, proof, root));
  console.log(
    `inclusion  leaf ${String(index).padStart(7)} of ${n}: ${proof.length} hashes, ${bytes(proof)} bytes, verify ${us.toFixed(2)} µs`,
  );
}
for (const m of [1, Math.floor(n / 3), n - 1]) {
  const proof = consistencyProof(leaves, m);
  const rootM = treeRoot(leaves.slice(0, m));
  const us = micros(() => verifyConsistency(m, n, rootM, root, proof));
  console.log(
    `consistency ${String(m).padStart(7)} → ${n}: ${proof.length} hashes, ${bytes(proof)} bytes, verify ${us.toFixed(2)} µs`,
  );
}
