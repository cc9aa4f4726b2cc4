import { hookinboxError } from "../errors.ts";
import type { IdentityContext, IdentityField, IdentitySpec } from "../providers/types.ts";
import type { EventIdentity } from "../store/types.ts";
import type { RequestHeaders } from "./headers.ts";
import { readJsonPath } from "./json-path.ts";

const utf8 = new TextDecoder("utf-8", { fatal: false });
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A lone UTF-16 surrogate (from a JSON `\ud800` escape): stored, it would become U+FFFD. */
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function invalidUtf8(where: string) {
  return hookinboxError("HOOKINBOX_IDENTITY_INVALID_UTF8", where);
}

/** Whether text decoded strictly; the lenient decoder's U+FFFD would merge distinct ids. */
function decodesStrictly(bytes: Uint8Array): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Whether text is bytes as Latin-1 (no character above U+00FF) with at least one non-ASCII. */
function isLatin1Bytes(value: string): boolean {
  let nonAscii = false;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit > 0xff) return false;
    if (unit > 0x7f) nonAscii = true;
  }
  return nonAscii;
}

/**
 * Header values arrive as Latin-1 (one character per byte). A value whose bytes are not UTF-8
 * is refused when identity reads it, so ids that differ only in such bytes never meet.
 */
function strictHeaders(headers: RequestHeaders): RequestHeaders {
  return {
    pairs: headers.pairs,
    get(name) {
      const value = headers.get(name);
      if (value === undefined || !isLatin1Bytes(value)) return value;
      if (!decodesStrictly(Buffer.from(value, "latin1"))) throw invalidUtf8(`header ${name}`);
      return value;
    },
  };
}

interface StrictContext extends IdentityContext {
  /** Whether the body was decoded leniently (it is not UTF-8), once `json()` has run. */
  readonly bodyInvalid: () => boolean;
}

function contextFor(headers: RequestHeaders, body: Uint8Array): StrictContext {
  let parsed: { value: unknown } | undefined;
  let bodyInvalid = false;
  return {
    headers: strictHeaders(headers),
    body,
    bodyInvalid: () => bodyInvalid,
    json() {
      if (!parsed) {
        try {
          // One decode: strict first (almost every body is UTF-8), lenient only when it fails.
          let text: string;
          try {
            text = strictUtf8.decode(body);
          } catch {
            bodyInvalid = true;
            text = utf8.decode(body);
          }
          parsed = { value: JSON.parse(text) };
        } catch (error) {
          throw hookinboxError(
            "HOOKINBOX_BODY_INVALID_JSON",
            "the identity is read from the body",
            error,
          );
        }
      }
      return parsed.value;
    },
  };
}

/**
 * Reads one identity field: a function (presets), `header:name`, or a JSON path into the body.
 *
 * @example
 * ```ts
 * readField("header:x-event-id", context);
 * ```
 */
export function readField(field: IdentityField | undefined, context: IdentityContext): unknown {
  if (field === undefined) return undefined;
  if (typeof field === "function") return field(context);
  if (field.startsWith("header:")) return context.headers.get(field.slice(7).toLowerCase());
  return readJsonPath(context.json(), field);
}

/** Optional fields never reject an event: an unreadable one is simply unknown. */
function readOptional(field: IdentityField | undefined, context: IdentityContext): unknown {
  try {
    return readField(field, context);
  } catch {
    return undefined;
  }
}

function asText(value: unknown): string | null {
  if (typeof value === "string") return value === "" ? null : value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "bigint") return value.toString();
  return null;
}

/** Epoch numbers below 1e11 are seconds (until the year 5138), above are milliseconds. */
function asEpochMs(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) {
    return value < 1e11 ? Math.round(value * 1000) : Math.round(value);
  }
  if (typeof value === "string" && value !== "") {
    if (/^\d+(\.\d+)?$/.test(value)) return asEpochMs(Number(value));
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : ms;
  }
  return null;
}

/** Versions are numbers: sequence numbers as they are, date strings as epoch ms. */
function asVersion(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && value !== "") {
    if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : ms;
  }
  return null;
}

/**
 * Reads an event's identity (dedup key, type, occurred-at, ordering key, version) from the
 * fields the source names. A missing id is an error: hookinbox never falls back to a body hash.
 * An id that is not valid UTF-8 (bytes in a header or the body, or a lone `\uD800` escape) is
 * `HOOKINBOX_IDENTITY_INVALID_UTF8`: decoded leniently, distinct ids would merge.
 *
 * @example
 * ```ts
 * identify({ id: "$.id", type: "$.type" }, headers, body); // { dedupKey: "evt_1", type: "invoice.paid", … }
 * ```
 */
export function identify(
  spec: IdentitySpec,
  headers: RequestHeaders,
  body: Uint8Array,
): EventIdentity {
  const context = contextFor(headers, body);
  const dedupKey = asText(readField(spec.id, context));
  if (dedupKey === null) {
    throw hookinboxError(
      "HOOKINBOX_EVENT_ID_MISSING",
      typeof spec.id === "string"
        ? `expected it at ${spec.id}`
        : spec.id
          ? "a field of the source's id is missing"
          : "the source defines no id",
    );
  }
  if (dedupKey.length > 512)
    throw hookinboxError("HOOKINBOX_EVENT_ID_MISSING", "the id is over 512 characters");
  if (loneSurrogate.test(dedupKey) || (context.bodyInvalid() && dedupKey.includes("\uFFFD"))) {
    throw invalidUtf8("the id read from the body");
  }
  return {
    dedupKey,
    type: asText(readOptional(spec.type, context)),
    occurredAt: asEpochMs(readOptional(spec.occurredAt, context)),
    orderingKey: asText(readOptional(spec.orderingKey, context)),
    version: asVersion(readOptional(spec.version, context)),
  };
}
