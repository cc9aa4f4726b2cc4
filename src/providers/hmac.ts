/**
 * A generic, configurable HMAC scheme for providers without a dedicated module: one signature
 * header, a template for the signed content, optional signed timestamp and id headers.
 */

import { z } from "zod";
import { duration, headerName, signed } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.js";
import {
  decodeBase64,
  decodeHex,
  decodeSecret,
  type HmacAlgorithm,
  hmac as mac,
  memoizeKeys,
  type SecretEncoding,
} from "./crypto.js";
import { defineProvider } from "./definition.ts";
import { findMatchingSecret, readHeader, requireSecrets } from "./match.js";
import { checkTimestamp, checkTolerance, parseRfc3339, parseTimestamp } from "./timestamps.js";
import type { IdentitySpec, ProviderScheme, SignedRequest, Verified } from "./types.js";

/**
 * Options of the generic HMAC scheme. Header names are matched case-insensitively.
 *
 * @example
 * ```ts
 * const options: HmacOptions = {
 *   header: "x-signature", prefix: "sha256=", algorithm: "sha256", encoding: "hex",
 *   secretEncoding: "utf8", signedContent: "{body}", timestampUnit: "s", toleranceMs: 300_000,
 * };
 * ```
 */
export interface HmacOptions {
  /** The header carrying the signature(s), e.g. `x-signature`. */
  readonly header: string;
  /**
   * A prefix each signature carries, e.g. `sha256=` or `v0=` (case-sensitive). Tokens without
   * it are other versions and are ignored.
   */
  readonly prefix?: string;
  readonly algorithm: HmacAlgorithm;
  /** How the signature is written in the header. */
  readonly encoding: "hex" | "base64";
  /** How the configured secret string becomes key bytes. */
  readonly secretEncoding: SecretEncoding;
  /**
   * What is MACed, as a template. Tokens: `{body}` (raw bytes), `{timestamp}` (the timestamp
   * header exactly as received), `{id}` (the id header), `{method}`, `{url}` (path and query
   * as received, e.g. `/webhooks/crm?x=1`; write a literal origin before it for providers
   * that sign the full URL), `{header:NAME}` (any header). Everything else is literal text;
   * `{` and `}` outside tokens are rejected. Example: `"v0:{timestamp}:{body}"`.
   */
  readonly signedContent: string;
  /** Header holding the signed timestamp; when set the timestamp is required and checked. */
  readonly timestampHeader?: string;
  /**
   * A tag that marks the signed timestamp as a token of the signature header itself, as in
   * `t=1700000000,v1=…` (WorkOS, Calendly): `"t="`. Exclusive with `timestampHeader`; exactly
   * one such token is required.
   */
  readonly timestampTag?: string;
  /**
   * Unit of the timestamp: integer seconds, integer milliseconds, or an RFC 3339 date-time
   * (`2021-07-25T10:00:00Z`, Zendesk).
   */
  readonly timestampUnit: "s" | "ms" | "rfc3339";
  /** Header holding the provider's event id; required when the template uses `{id}`. */
  readonly idHeader?: string;
  /** How far the timestamp may be from now, both ways, in ms. */
  readonly toleranceMs: number;
}

/**
 * One piece of a parsed `signedContent` template.
 *
 * @example
 * ```ts
 * const segment: SignedContentSegment = { kind: "header", name: "x-tenant" };
 * ```
 */
export type SignedContentSegment =
  | { readonly kind: "literal"; readonly text: string }
  | { readonly kind: "body" | "timestamp" | "id" | "method" | "url" }
  | { readonly kind: "header"; readonly name: string };

const ALGORITHMS: readonly string[] = ["sha1", "sha256", "sha512"];
const ENCODINGS: readonly string[] = ["hex", "base64"];
const SECRET_ENCODINGS: readonly string[] = ["utf8", "base64", "hex"];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * Parses a signed-content template into segments (done once, at scheme creation).
 * Throws a plain `Error` for unknown tokens, stray braces or bad header names.
 *
 * @example
 * ```ts
 * parseSignedContent("v0:{timestamp}:{body}");
 * // [{kind:"literal",text:"v0:"},{kind:"timestamp"},{kind:"literal",text:":"},{kind:"body"}]
 * ```
 */
export function parseSignedContent(template: string): SignedContentSegment[] {
  const segments: SignedContentSegment[] = [];
  const token = /\{([^{}]*)\}/g;
  let last = 0;
  const pushLiteral = (text: string) => {
    if (text === "") return;
    if (text.includes("{") || text.includes("}")) {
      throw new Error(`signedContent has an unbalanced brace: ${JSON.stringify(template)}`);
    }
    const previous = segments[segments.length - 1];
    if (previous?.kind === "literal") {
      segments[segments.length - 1] = { kind: "literal", text: previous.text + text };
    } else {
      segments.push({ kind: "literal", text });
    }
  };
  for (let match = token.exec(template); match !== null; match = token.exec(template)) {
    pushLiteral(template.slice(last, match.index));
    last = match.index + match[0].length;
    const name = match[1] ?? "";
    if (
      name === "body" ||
      name === "timestamp" ||
      name === "id" ||
      name === "method" ||
      name === "url"
    ) {
      segments.push({ kind: name });
    } else if (name.startsWith("header:")) {
      const header = name.slice("header:".length).trim().toLowerCase();
      if (!HEADER_NAME.test(header)) {
        throw new Error(`signedContent token {${name}} does not name a valid header`);
      }
      segments.push({ kind: "header", name: header });
    } else {
      throw new Error(
        `signedContent has an unknown token {${name}}; expected {body}, {timestamp}, {id}, {method}, {url} or {header:NAME}`,
      );
    }
  }
  pushLiteral(template.slice(last));
  return segments;
}

function headerOption(value: string | undefined, option: string): string | undefined {
  if (value === undefined) return undefined;
  const name = value.trim().toLowerCase();
  if (!HEADER_NAME.test(name)) throw new Error(`${option} must be a header name`);
  return name;
}

function oneOf(value: string, allowed: readonly string[], option: string): void {
  if (!allowed.includes(value)) {
    throw new Error(`${option} must be one of ${allowed.join(", ")}`);
  }
}

/**
 * A generic HMAC scheme. Options are validated and the template parsed at creation; a
 * misconfiguration throws a plain `Error` (e.g. `{id}` without `idHeader`, `{timestamp}`
 * without `timestampHeader`).
 *
 * Accepted signature header: one or more tokens separated by whitespace or commas (only
 * whitespace when `prefix` itself contains a comma, as in `v1,`). With a `prefix`, tokens
 * that carry it are the candidate signatures; tokens that do not are other versions and are
 * ignored, except that a token lacking even the prefix's separator (its last character when
 * that is `=`, `,` or `:`) makes the header malformed. Without a prefix every token is a
 * candidate. Candidates are decoded strictly (hex in either case; canonical padded base64);
 * one that does not decode matches nothing.
 *
 * Verification, in order: no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET; header
 * absent or blank → HOOKINBOX_SIGNATURE_MISSING; no token or a token without the separator →
 * HOOKINBOX_SIGNATURE_MALFORMED; no token with the prefix →
 * HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED; timestamp header absent →
 * HOOKINBOX_TIMESTAMP_MISSING, not canonical digits → HOOKINBOX_TIMESTAMP_MALFORMED; a header
 * the template signs (`{id}`, `{header:NAME}`) absent → HOOKINBOX_SIGNATURE_MISSING; no
 * match → HOOKINBOX_SIGNATURE_MISMATCH; then the window → HOOKINBOX_TIMESTAMP_TOO_OLD /
 * HOOKINBOX_TIMESTAMP_IN_FUTURE.
 *
 * @example
 * ```ts
 * // Slack, expressed with the generic scheme:
 * const slack = hmacScheme({
 *   header: "x-slack-signature", prefix: "v0=", algorithm: "sha256", encoding: "hex",
 *   secretEncoding: "utf8", signedContent: "v0:{timestamp}:{body}",
 *   timestampHeader: "x-slack-request-timestamp", timestampUnit: "s", toleranceMs: 300_000,
 * });
 * ```
 */
export function hmacScheme(options: HmacOptions): ProviderScheme {
  const header = headerOption(options.header, "header");
  if (header === undefined) throw new Error("header is required");
  oneOf(options.algorithm, ALGORITHMS, "algorithm");
  oneOf(options.encoding, ENCODINGS, "encoding");
  oneOf(options.secretEncoding, SECRET_ENCODINGS, "secretEncoding");
  oneOf(options.timestampUnit, ["s", "ms", "rfc3339"], "timestampUnit");
  const toleranceMs = checkTolerance(options.toleranceMs);
  const timestampHeader = headerOption(options.timestampHeader, "timestampHeader");
  const timestampTag = options.timestampTag === "" ? undefined : options.timestampTag;
  if (timestampTag !== undefined && timestampHeader !== undefined) {
    throw new Error("set timestampHeader or timestampTag, not both");
  }
  if (timestampTag !== undefined && !/^[A-Za-z0-9_-]+=$/.test(timestampTag)) {
    throw new Error('timestampTag must be a name followed by "=", like "t="');
  }
  const timestamped = timestampHeader !== undefined || timestampTag !== undefined;
  const idHeader = headerOption(options.idHeader, "idHeader");
  const segments = parseSignedContent(options.signedContent);
  if (!segments.some((s) => s.kind === "body")) {
    throw new Error("signedContent must include {body}");
  }
  if (segments.some((s) => s.kind === "timestamp") && !timestamped) {
    throw new Error(
      "signedContent uses {timestamp} but neither timestampHeader nor timestampTag is set",
    );
  }
  if (segments.some((s) => s.kind === "id") && idHeader === undefined) {
    throw new Error("signedContent uses {id} but idHeader is not set");
  }

  const { algorithm, timestampUnit } = options;
  const prefix = options.prefix === "" ? undefined : options.prefix;
  const separators = prefix?.includes(",") ? /\s+/ : /[\s,]+/;
  const tagSeparator = prefix !== undefined && /[=,:]$/.test(prefix) ? prefix.slice(-1) : undefined;
  const decode = options.encoding === "hex" ? decodeHex : decodeBase64;
  const secretEncoding = options.secretEncoding;
  const keyOf = memoizeKeys((secret) => decodeSecret(secret, secretEncoding));
  const bodyOnly = segments.length === 1;

  const parseTime = (value: string) =>
    timestampUnit === "rfc3339" ? parseRfc3339(value) : parseTimestamp(value, timestampUnit);

  /** The signatures of the header, and the value of its `timestampTag` token (if any). */
  function parseSignatures(value: string): { signatures: Buffer[]; tagged: string[] } {
    const signatures: Buffer[] = [];
    const tagged: string[] = [];
    let tokens = 0;
    let prefixed = 0;
    for (const token of value.split(separators)) {
      if (token === "") continue;
      tokens++;
      if (timestampTag !== undefined && token.startsWith(timestampTag)) {
        tagged.push(token.slice(timestampTag.length));
        continue;
      }
      let encoded = token;
      if (prefix !== undefined) {
        if (!token.startsWith(prefix)) {
          if (tagSeparator !== undefined && !token.includes(tagSeparator)) {
            throw hookinboxError(
              "HOOKINBOX_SIGNATURE_MALFORMED",
              `expected ${prefix}… in ${header}`,
            );
          }
          continue;
        }
        prefixed++;
        encoded = token.slice(prefix.length);
      }
      const bytes = decode(encoded);
      if (bytes !== undefined) signatures.push(bytes);
    }
    if (tokens === 0) throw hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", `${header} is empty`);
    if (prefix !== undefined && prefixed === 0) {
      throw hookinboxError(
        "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
        `expected ${prefix}… in ${header}`,
      );
    }
    return { signatures, tagged };
  }

  /** The signed timestamp as sent (header or tagged token), or undefined when unsigned. */
  function readTimestamp(request: SignedRequest, tagged: readonly string[]): string | undefined {
    if (timestampHeader !== undefined) {
      const timestamp = readHeader(request.headers, timestampHeader);
      if (timestamp === undefined) {
        throw hookinboxError("HOOKINBOX_TIMESTAMP_MISSING", `expected header ${timestampHeader}`);
      }
      return timestamp;
    }
    if (timestampTag === undefined) return undefined;
    if (tagged.length === 0) {
      throw hookinboxError("HOOKINBOX_TIMESTAMP_MISSING", `expected ${timestampTag}… in ${header}`);
    }
    if (tagged.length > 1) {
      throw hookinboxError(
        "HOOKINBOX_SIGNATURE_MALFORMED",
        `more than one ${timestampTag} in ${header}`,
      );
    }
    return tagged[0];
  }

  function signedParts(request: SignedRequest, timestamp: string | undefined) {
    if (bodyOnly) return [request.body];
    const parts: (string | Uint8Array)[] = [];
    for (const segment of segments) {
      switch (segment.kind) {
        case "literal":
          parts.push(segment.text);
          break;
        case "body":
          parts.push(request.body);
          break;
        case "timestamp":
          parts.push(timestamp ?? "");
          break;
        case "method":
          parts.push(request.method);
          break;
        case "url":
          parts.push(request.url);
          break;
        case "id":
          parts.push(signedHeader(request, idHeader ?? ""));
          break;
        case "header":
          parts.push(signedHeader(request, segment.name));
          break;
      }
    }
    return parts;
  }

  const identity: IdentitySpec = Object.freeze(
    idHeader === undefined ? {} : { id: `header:${idHeader}` },
  );

  return {
    provider: "hmac",
    identity,
    verifier: {
      verify(request, secrets, nowMs): Verified {
        requireSecrets(secrets);
        const value = readHeader(request.headers, header);
        if (value === undefined) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", `expected header ${header}`);
        }
        const { signatures, tagged } = parseSignatures(value);
        const timestamp = readTimestamp(request, tagged);
        const signedAt = timestamp === undefined ? undefined : parseTime(timestamp);
        const parts = signedParts(request, timestamp);
        const secretIndex = findMatchingSecret(
          secrets,
          keyOf,
          (key) => mac(algorithm, key, parts),
          signatures,
        );
        if (signedAt === undefined) return { secretIndex };
        checkTimestamp(signedAt, nowMs, toleranceMs);
        return { secretIndex, signedAt };
      },
    },
  };
}

function signedHeader(request: SignedRequest, name: string): string {
  const value = readHeader(request.headers, name);
  if (value === undefined) {
    throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", `signed header ${name} is missing`);
  }
  return value;
}

/**
 * A generic HMAC source for senders with their own scheme. Returns `{ provider: "hmac", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { crm: hmac({ header: "x-signature", secrets: ["s"], identity: { id: "$.eventId" } }) }
 * ```
 */
export const hmac = defineProvider({
  name: "hmac",
  options: {
    ...signed,
    header: headerName,
    prefix: z.string().optional(),
    algorithm: z.enum(["sha1", "sha256", "sha512"]).optional(),
    encoding: z.enum(["hex", "base64"]).optional(),
    secretEncoding: z.enum(["utf8", "base64", "hex"]).optional(),
    signedContent: z.string().min(1).optional(),
    timestampHeader: headerName.optional(),
    timestampUnit: z.enum(["s", "ms"]).optional(),
    idHeader: headerName.optional(),
    tolerance: duration.optional(),
  },
  refine: (schema) =>
    schema.refine((s) => s.idHeader !== undefined || s.identity?.id !== undefined, {
      message:
        'an hmac source needs an event id: set idHeader or identity.id (e.g. "$.eventId"); a body hash is never used by default',
      path: ["identity", "id"],
    }),
  docs: "#generic-hmac-hmac",
  // Signature headers empty: each source names its own signature, timestamp and id headers (a destination adds them to `forwardHeaders`).
  headers: { signature: [] },
  scheme: (source, context) =>
    hmacScheme({
      header: source.header.toLowerCase(),
      prefix: source.prefix,
      algorithm: source.algorithm ?? "sha256",
      encoding: source.encoding ?? "hex",
      secretEncoding: source.secretEncoding ?? "utf8",
      signedContent: source.signedContent ?? "{body}",
      timestampHeader: source.timestampHeader?.toLowerCase(),
      timestampUnit: source.timestampUnit ?? "s",
      idHeader: source.idHeader?.toLowerCase(),
      toleranceMs: context.toleranceMs,
    }),
});
