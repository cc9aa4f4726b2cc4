/**
 * Body helpers shared by the provider schemes whose identity or signed content lives in the
 * body: lenient JSON access for identity functions, form decoding, `key=value` header lists,
 * and a public-URL option. Nothing here throws on attacker-controlled input except where the
 * JSDoc names a HookinboxError.
 */

import { hookinboxError, isHookinboxError } from "../errors.ts";
import type { IdentityContext } from "./types.ts";

const utf8 = new TextDecoder("utf-8", { fatal: false });

/**
 * Decodes bytes as UTF-8, replacing invalid sequences (never throws).
 *
 * @example
 * ```ts
 * utf8Text(request.body); // "token=…&team_id=…"
 * ```
 */
export function utf8Text(bytes: Uint8Array): string {
  return utf8.decode(bytes);
}

/**
 * The parsed JSON body of an identity context, or `undefined` when the body is not JSON.
 * Other errors propagate.
 *
 * @example
 * ```ts
 * const body = jsonOrUndefined(context); // unknown
 * ```
 */
export function jsonOrUndefined(context: IdentityContext): unknown {
  try {
    return context.json();
  } catch (error) {
    if (isHookinboxError(error, "HOOKINBOX_BODY_INVALID_JSON")) return undefined;
    throw error;
  }
}

/**
 * Parses bytes as JSON, or returns `undefined` when they are not JSON (never throws).
 *
 * @example
 * ```ts
 * parseJsonOrUndefined(request.body); // unknown | undefined
 * ```
 */
export function parseJsonOrUndefined(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(utf8Text(bytes));
  } catch {
    return undefined;
  }
}

/**
 * Reads a property of a value when it is a non-array object, else `undefined`. Only own
 * properties count, so `__proto__` or `constructor` never reach the prototype.
 *
 * @example
 * ```ts
 * field({ a: { b: 1 } }, "a"); // { b: 1 }
 * field("x", "a");             // undefined
 * ```
 */
export function field(value: unknown, name: string): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  return Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;
}

/**
 * Follows a chain of property names (see {@link field}).
 *
 * @example
 * ```ts
 * path({ event: { type: "message" } }, "event", "type"); // "message"
 * ```
 */
export function path(value: unknown, ...names: readonly string[]): unknown {
  let current = value;
  for (const name of names) current = field(current, name);
  return current;
}

/**
 * A string or finite number as text (numbers in their JavaScript spelling), else `undefined`.
 * Empty strings count as absent.
 *
 * @example
 * ```ts
 * scalarText(123);  // "123"
 * scalarText("");   // undefined
 * scalarText(null); // undefined
 * ```
 */
export function scalarText(value: unknown): string | undefined {
  if (typeof value === "string") return value === "" ? undefined : value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * Decodes an `application/x-www-form-urlencoded` body (`+` is a space, `%XX` escapes as UTF-8).
 * Never throws; invalid escapes are kept or replaced as the WHATWG URL standard says.
 *
 * @example
 * ```ts
 * formParams(bodyBytes("a=1&b=x+y")).get("b"); // "x y"
 * ```
 */
export function formParams(bytes: Uint8Array): URLSearchParams {
  return form(utf8Text(bytes));
}

/** `URLSearchParams` drops one leading `?`; a leading `&` keeps the text exactly as sent. */
function form(text: string): URLSearchParams {
  return new URLSearchParams(`&${text}`);
}

/**
 * The query parameters of a request url (path and query as received). Never throws.
 *
 * @example
 * ```ts
 * queryParams("/webhooks/mp?data.id=ABC&type=payment").get("data.id"); // "ABC"
 * ```
 */
export function queryParams(url: string): URLSearchParams {
  const q = url.indexOf("?");
  if (q < 0) return new URLSearchParams();
  const hash = url.indexOf("#", q);
  return form(url.slice(q + 1, hash < 0 ? undefined : hash));
}

/**
 * The form parameters of an identity context's raw body (absent when the context carries no
 * body, or the body is JSON: a body starting with `{` or `[` is not treated as a form).
 *
 * @example
 * ```ts
 * contextForm(context)?.get("trigger_id");
 * ```
 */
export function contextForm(context: IdentityContext): URLSearchParams | undefined {
  const body = context.body;
  if (body === undefined) return undefined;
  const text = utf8Text(body);
  const start = text.trimStart();
  if (start.startsWith("{") || start.startsWith("[")) return undefined;
  return form(text);
}

/**
 * Splits a `key=value<separator>key=value` signature header into trimmed pairs. Values may
 * contain `=` (only the first one splits).
 *
 * @throws HookinboxError HOOKINBOX_SIGNATURE_MALFORMED for an item that is not `key=value`
 *   with a non-empty key (including empty items).
 * @example
 * ```ts
 * keyValueList("ts=1;h1=ab", ";", "paddle-signature"); // [["ts","1"],["h1","ab"]]
 * ```
 */
export function keyValueList(
  header: string,
  separator: string,
  name: string,
): Array<[key: string, value: string]> {
  const pairs: Array<[string, string]> = [];
  for (const rawItem of header.split(separator)) {
    const item = rawItem.trim();
    const eq = item.indexOf("=");
    if (eq <= 0) {
      throw hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", `expected key=value pairs in ${name}`);
    }
    pairs.push([item.slice(0, eq).trim(), item.slice(eq + 1).trim()]);
  }
  return pairs;
}

/**
 * Validates a public base URL option at scheme creation (a config mistake, so it throws a
 * plain Error): absolute `http:` or `https:`, no query, fragment or credentials. Returns it
 * without a trailing slash, ready for `base + request.url`.
 *
 * @example
 * ```ts
 * checkPublicUrl("https://hooks.example.com/", "publicUrl"); // "https://hooks.example.com"
 * ```
 */
export function checkPublicUrl(value: string, option: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${option} must be an absolute URL such as "https://hooks.example.com"`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new Error(`${option} must use https: or http:`);
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    throw new Error(`${option} must not carry a query, a fragment or credentials`);
  }
  return value.replace(/\/+$/, "");
}

/**
 * The full public URL of a request: the configured base followed by the path and query as
 * received (a url not starting with `/` gets one).
 *
 * @example
 * ```ts
 * fullUrl("https://hooks.example.com", "/webhooks/twilio?x=1");
 * // "https://hooks.example.com/webhooks/twilio?x=1"
 * ```
 */
export function fullUrl(base: string, url: string): string {
  return url.startsWith("/") ? base + url : `${base}/${url}`;
}
