/**
 * A deterministic PRNG (mulberry32): the same sequence for the same seed, so a failing run of a
 * randomised test can be replayed.
 *
 * @example
 * ```ts
 * const random = seeded(42);
 * random(); // a number in [0, 1), the same every run
 * ```
 */
export function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
