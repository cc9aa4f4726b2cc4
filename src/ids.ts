import { randomFillSync } from "node:crypto";

const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"; // Crockford base32, as in ULID

let lastTime = -1;
let lastRandom: Uint8Array = new Uint8Array(10);

/**
 * The 10-character time part of a ULID for `ms`: ids made at or after `ms` sort at or after it.
 *
 * @example
 * ```ts
 * `rcp_${encodeTime(Date.now() - 60_000)}`; // a lower bound for the last minute's receipt ids
 * ```
 */
export function encodeTime(ms: number): string {
  let out = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = alphabet[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  // 80 bits → 16 base32 characters, most significant first.
  let out = "";
  let acc = 0;
  let bits = 0;
  for (const byte of bytes) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += alphabet[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

// Random bytes are drawn 1,000 at a time: `randomBytes(10)` for each new millisecond was a
// native call per accept or two on the ingest path.
const pool = new Uint8Array(1000);
let poolAt = pool.length;

/** 10 fresh random bytes (a copy: ids keep them while the pool is refilled). */
function freshRandom(): Uint8Array {
  if (poolAt + 10 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  poolAt += 10;
  return pool.slice(poolAt - 10, poolAt);
}

function incrementRandom(bytes: Uint8Array): Uint8Array {
  const next = Uint8Array.from(bytes);
  for (let i = next.length - 1; i >= 0; i--) {
    const value = (next[i] ?? 0) + 1;
    next[i] = value & 0xff;
    if (value <= 0xff) break;
  }
  return next;
}

/** How far back a time may be and still be clamped to the last one (see `ulid`). */
const clampWindowMs = 60_000;

/**
 * A monotonic ULID: 26 characters that sort by creation time within this process, so ids double
 * as cursors for newest-first listings. A time up to a minute before the last one (a receive
 * time taken a moment before another request's) is clamped to it; a time further back (an
 * explicit old time, a clock stepped back) keeps its own prefix, because the prefix places the
 * row in its day's partition and under retention's cut.
 *
 * @example
 * ```ts
 * const id = `evt_${ulid()}`; // "evt_01JD7…"
 * ```
 */
export function ulid(now: number = Date.now()): string {
  if (now <= lastTime && lastTime - now <= clampWindowMs) {
    lastRandom = incrementRandom(lastRandom);
    return encodeTime(lastTime) + encodeRandom(lastRandom);
  }
  lastTime = now;
  lastRandom = freshRandom();
  return encodeTime(now) + encodeRandom(lastRandom);
}

/**
 * The 10-character time prefix of ULIDs made at `ms`: every id made earlier sorts below
 * `prefix + "0…"`, so a time bound becomes a primary-key range.
 *
 * @example
 * ```ts
 * `evt_${ulidTimePrefix(Date.now() - 86_400_000)}`; // ids of events from more than a day ago sort below this
 * ```
 */
export function ulidTimePrefix(ms: number): string {
  return encodeTime(Math.max(0, Math.floor(ms)));
}

/**
 * The time (ms) in the first 10 ULID characters of an `xxx_<ulid>` id (or a bare ULID), the
 * inverse of `ulidTimePrefix`; a character outside the alphabet counts as 0.
 *
 * @example
 * ```ts
 * idTime(`evt_${ulid(1_700_000_000_000)}`); // 1_700_000_000_000
 * ```
 */
export function idTime(id: string): number {
  const start = id.indexOf("_") + 1;
  let ms = 0;
  for (const c of id.slice(start, start + 10)) ms = ms * 32 + Math.max(alphabet.indexOf(c), 0);
  return ms;
}
