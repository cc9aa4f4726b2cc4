/**
 * Compact JWS (JWT) parsing and signature checking with node:crypto, for the schemes whose proof
 * is a signed token (Google Pub/Sub push, Plaid). Only the algorithm the scheme expects is
 * accepted (never `none`, never an HMAC algorithm with a public key), and the key's type must
 * fit it. Parsing never throws anything but a HookinboxError.
 */

import { type KeyObject, verify } from "node:crypto";
import { hookinboxError } from "../errors.ts";

/** The asymmetric JWS algorithms hookinbox checks. */
export type JwsAlgorithm = "RS256" | "ES256";

/** A parsed compact JWS: its decoded header and payload, and what was signed. */
export interface ParsedJws {
  readonly header: Readonly<Record<string, unknown>>;
  readonly payload: Readonly<Record<string, unknown>>;
  /** `base64url(header).base64url(payload)`, as signed. */
  readonly signingInput: string;
  readonly signature: Buffer;
}

const base64Url = /^[A-Za-z0-9_-]*$/;

/** Strict base64url without padding: each byte string has one accepted spelling. */
function decodeSegment(segment: string): Buffer | undefined {
  if (!base64Url.test(segment) || segment.length % 4 === 1) return undefined;
  const bytes = Buffer.from(segment, "base64url");
  // Re-encoding rejects non-zero trailing bits, so a flipped unused bit is not the same token.
  return bytes.toString("base64url") === segment ? bytes : undefined;
}

function jsonObject(bytes: Buffer | undefined): Record<string, unknown> | undefined {
  if (bytes === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(bytes.toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Splits and decodes a compact JWS, or throws HOOKINBOX_SIGNATURE_MALFORMED.
 *
 * @example
 * ```ts
 * const token = parseJws(authorization.slice("Bearer ".length));
 * token.header.kid; // "1f2e…"
 * ```
 */
export function parseJws(token: string): ParsedJws {
  const parts = token.split(".");
  const [h = "", p = "", s = ""] = parts;
  const header = parts.length === 3 ? jsonObject(decodeSegment(h)) : undefined;
  const payload = header ? jsonObject(decodeSegment(p)) : undefined;
  const signature = payload ? decodeSegment(s) : undefined;
  if (!header || !payload || !signature || signature.length === 0) {
    throw hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", "expected a JWT (three base64url parts)");
  }
  return { header, payload, signingInput: `${h}.${p}`, signature };
}

/**
 * Checks that the token's header names `algorithm`, or throws
 * HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED; returns its `kid` (HOOKINBOX_SIGNATURE_MALFORMED
 * when absent).
 *
 * @example
 * ```ts
 * const kid = requireAlgorithm(token, "RS256");
 * ```
 */
export function requireAlgorithm(token: ParsedJws, algorithm: JwsAlgorithm): string {
  if (token.header.alg !== algorithm) {
    throw hookinboxError(
      "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      `expected a token signed with ${algorithm}`,
    );
  }
  const kid = token.header.kid;
  if (typeof kid !== "string" || kid === "" || kid.length > 256) {
    throw hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", "the token names no key id");
  }
  return kid;
}

/**
 * Whether `token` is signed by `key` with `algorithm`. A key of the wrong type for the algorithm
 * (an EC key for RS256, a P-384 key for ES256) never verifies.
 *
 * @example
 * ```ts
 * if (!jwsSignatureValid(token, key, "ES256")) throw hookinboxError("HOOKINBOX_SIGNATURE_MISMATCH");
 * ```
 */
export function jwsSignatureValid(
  token: ParsedJws,
  key: KeyObject,
  algorithm: JwsAlgorithm,
): boolean {
  const input = Buffer.from(token.signingInput, "ascii");
  try {
    if (algorithm === "RS256") {
      return key.asymmetricKeyType === "rsa" && verify("sha256", input, key, token.signature);
    }
    return (
      key.asymmetricKeyType === "ec" &&
      key.asymmetricKeyDetails?.namedCurve === "prime256v1" &&
      token.signature.length === 64 &&
      verify("sha256", input, { key, dsaEncoding: "ieee-p1363" }, token.signature)
    );
  } catch {
    return false;
  }
}

/**
 * A numeric claim in seconds (`iat`, `exp`), or `undefined` when absent or not a finite number.
 *
 * @example
 * ```ts
 * numericClaim(token.payload, "exp"); // 1700003600
 * ```
 */
export function numericClaim(
  payload: Readonly<Record<string, unknown>>,
  name: string,
): number | undefined {
  const value = payload[name];
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
