import type { HeaderReader } from "../providers/types.ts";

/** Headers as hosts give them: Node-style records, or raw `[name, value]` pairs in arrival order. */
export type HeaderInput =
  | Readonly<Record<string, string | readonly string[] | undefined>>
  | ReadonlyArray<readonly [string, string]>;

/** Headers normalised once per request: lower-case lookup plus the verbatim pairs for storage. */
export interface RequestHeaders extends HeaderReader {
  /** Every header as sent: names in their original case, in arrival order. */
  readonly pairs: ReadonlyArray<readonly [string, string]>;
}

/**
 * Normalises request headers for verification (lower-case lookup, repeats joined with ", ")
 * while keeping the verbatim pairs for storage.
 *
 * @example
 * ```ts
 * const headers = readHeaders([["Stripe-Signature", "t=1,v1=…"]]);
 * headers.get("stripe-signature"); // "t=1,v1=…"
 * ```
 */
export function readHeaders(input: HeaderInput): RequestHeaders {
  const pairs: Array<readonly [string, string]> = [];
  if (Array.isArray(input)) {
    for (const [name, value] of input as ReadonlyArray<readonly [string, string]>) {
      pairs.push([name, value]);
    }
  } else {
    for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) pairs.push([name, String(v)]);
      else pairs.push([name, String(value)]);
    }
  }
  const byName = new Map<string, string>();
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    const existing = byName.get(key);
    byName.set(key, existing === undefined ? value : `${existing}, ${value}`);
  }
  return { pairs, get: (name) => byName.get(name) };
}

/**
 * A request whose header reads are recorded, and `repeated(pairs)`: the first header it read
 * that arrived more than once, or null. The rule for repeated signature headers: any header a
 * verifier reads (signature, timestamp, key id…) must come once; several signatures inside one
 * header value (Stripe's `v1=…,v1=…`, Standard Webhooks' space-separated list) are not repetition.
 *
 * @example
 * ```ts
 * const watched = watchHeaderReads(signed);
 * verifier.verify(watched.request, secrets, now);
 * watched.repeated(headers.pairs); // "stripe-signature" when it came twice
 * ```
 */
export function watchHeaderReads<R extends { readonly headers: HeaderReader }>(
  request: R,
): { request: R; repeated(pairs: ReadonlyArray<readonly [string, string]>): string | null } {
  const read = new Set<string>();
  const headers: HeaderReader = {
    get: (name) => {
      read.add(name.toLowerCase());
      return request.headers.get(name);
    },
  };
  return {
    request: { ...request, headers },
    repeated(pairs) {
      const seen = new Map<string, number>();
      for (const [name] of pairs) {
        const key = name.toLowerCase();
        if (read.has(key)) seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      for (const [name, count] of seen) if (count > 1) return name;
      return null;
    },
  };
}

/**
 * Turns Node's `rawHeaders` (`[name, value, name, value…]`) into pairs.
 *
 * @example
 * ```ts
 * pairsFromRawHeaders(req.rawHeaders);
 * ```
 */
export function pairsFromRawHeaders(raw: readonly string[]): Array<readonly [string, string]> {
  const pairs: Array<readonly [string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
  return pairs;
}

/** At most this many header names are kept on a rejected receipt (the rest are dropped). */
export const rejectedHeaderNamesMax = 50;
/** Each kept header name is cut to this many characters. */
export const rejectedHeaderNameLength = 64;

/**
 * The header names a rejected receipt stores: the first 50, each cut to 64 characters, so an
 * unauthenticated request can never write more than about 3 KB of names.
 *
 * @example
 * ```ts
 * rejectedHeaderNames([["Host", "x"], ["X-" + "a".repeat(100), "y"]]); // ["Host", "X-aaaa…" (64)]
 * ```
 */
export function rejectedHeaderNames(pairs: ReadonlyArray<readonly [string, string]>): string[] {
  return pairs
    .slice(0, rejectedHeaderNamesMax)
    .map(([name]) => name.slice(0, rejectedHeaderNameLength));
}
