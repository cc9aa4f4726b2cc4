/**
 * Finds the byte ranges of the items of a JSON array inside a raw body, so a batch can be split
 * into events whose bytes are kept verbatim (never re-serialised). The scanner is iterative (no
 * recursion, so deep nesting cannot overflow the stack) and expects text that `JSON.parse`
 * already accepted; on anything else it returns `undefined` instead of throwing.
 */

import { utf8Text } from "./body.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * A byte range `[start, end)` in a body.
 *
 * @example
 * ```ts
 * const span: Span = { start: 1, end: 12 };
 * ```
 */
export interface Span {
  readonly start: number;
  readonly end: number;
}

function isWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function skipWhitespace(bytes: Uint8Array, i: number): number {
  while (i < bytes.length && isWhitespace(bytes[i])) i++;
  return i;
}

/** The index just past the string starting at `i` (a `"`), or -1. */
function skipString(bytes: Uint8Array, i: number): number {
  for (let j = i + 1; j < bytes.length; j++) {
    const byte = bytes[j];
    if (byte === BACKSLASH) j++;
    else if (byte === QUOTE) return j + 1;
  }
  return -1;
}

/** The index just past the value starting at `i`, or -1. Iterative for containers. */
function skipValue(bytes: Uint8Array, i: number): number {
  const first = bytes[i];
  if (first === QUOTE) return skipString(bytes, i);
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0;
    for (let j = i; j < bytes.length; j++) {
      const byte = bytes[j];
      if (byte === QUOTE) {
        const end = skipString(bytes, j);
        if (end < 0) return -1;
        j = end - 1;
      } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        depth++;
      } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // number, true, false, null
  let j = i;
  while (j < bytes.length) {
    const byte = bytes[j];
    if (byte === COMMA || byte === CLOSE_ARRAY || byte === CLOSE_OBJECT || isWhitespace(byte)) {
      break;
    }
    j++;
  }
  return j > i ? j : -1;
}

/** The span of the last member named `key` of the object at `i` (JSON.parse keeps the last). */
function memberSpan(bytes: Uint8Array, i: number, key: string): Span | undefined {
  if (bytes[i] !== OPEN_OBJECT) return undefined;
  let found: Span | undefined;
  let j = skipWhitespace(bytes, i + 1);
  if (bytes[j] === CLOSE_OBJECT) return undefined;
  for (;;) {
    if (bytes[j] !== QUOTE) return undefined;
    const keyEnd = skipString(bytes, j);
    if (keyEnd < 0) return undefined;
    let name: unknown;
    try {
      name = JSON.parse(utf8Text(bytes.subarray(j, keyEnd)));
    } catch {
      return undefined;
    }
    j = skipWhitespace(bytes, keyEnd);
    if (bytes[j] !== COLON) return undefined;
    j = skipWhitespace(bytes, j + 1);
    const valueEnd = skipValue(bytes, j);
    if (valueEnd < 0) return undefined;
    if (name === key) found = { start: j, end: valueEnd };
    j = skipWhitespace(bytes, valueEnd);
    if (bytes[j] === CLOSE_OBJECT) return found;
    if (bytes[j] !== COMMA) return undefined;
    j = skipWhitespace(bytes, j + 1);
  }
}

/** The spans of the elements of the array at `i`. */
function elementSpans(bytes: Uint8Array, i: number): Span[] | undefined {
  if (bytes[i] !== OPEN_ARRAY) return undefined;
  const spans: Span[] = [];
  let j = skipWhitespace(bytes, i + 1);
  if (bytes[j] === CLOSE_ARRAY) return spans;
  for (;;) {
    const end = skipValue(bytes, j);
    if (end < 0) return undefined;
    spans.push({ start: j, end });
    j = skipWhitespace(bytes, end);
    if (bytes[j] === CLOSE_ARRAY) return spans;
    if (bytes[j] !== COMMA) return undefined;
    j = skipWhitespace(bytes, j + 1);
  }
}

/**
 * The byte spans of the elements of the array reached by following `path` (object keys) from
 * the root; with `itemKey`, the span of that member inside each element instead (elements
 * without it are skipped). A leading UTF-8 byte-order mark is skipped. Returns `undefined`
 * when the path does not lead to an array.
 *
 * @example
 * ```ts
 * const bytes = new TextEncoder().encode('{"items":[{"a":1}, {"a":2}]}');
 * arrayItemSpans(bytes, ["items"]);      // [{start:10,end:17},{start:19,end:26}]
 * arrayItemSpans(bytes, ["items"], "a"); // spans of 1 and 2
 * ```
 */
export function arrayItemSpans(
  bytes: Uint8Array,
  path: readonly string[],
  itemKey?: string,
): Span[] | undefined {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  i = skipWhitespace(bytes, i);
  for (const key of path) {
    const span = memberSpan(bytes, i, key);
    if (span === undefined) return undefined;
    i = span.start;
  }
  const elements = elementSpans(bytes, i);
  if (elements === undefined || itemKey === undefined) return elements;
  const spans: Span[] = [];
  for (const element of elements) {
    const span = memberSpan(bytes, element.start, itemKey);
    if (span !== undefined) spans.push(span);
  }
  return spans;
}
