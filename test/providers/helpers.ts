/**
 * Test helpers for provider schemes: build a SignedRequest, assert a rejection's code and
 * status (and that its message leaks nothing), load the providers' published vectors.
 */

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { type ErrorCode, HookinboxError, hookinboxError } from "../../src/errors.js";
import type {
  ActiveSecret,
  HandshakeResponse,
  HeaderReader,
  IdentityContext,
  ProviderScheme,
  SignedRequest,
  Verified,
  Verifier,
} from "../../src/providers/types.js";

/** Headers as a plain object; `undefined` values are absent. Names are matched case-insensitively. */
export type Headers = Readonly<Record<string, string | undefined>>;

/** A HeaderReader over a plain object, looked up by lower-case name as the contract says. */
export function headerReader(headers: Headers): HeaderReader {
  const map = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) map.set(name.toLowerCase(), value);
  }
  return {
    get(name: string) {
      expect(name, "header names passed to get() must be lower-case").toBe(name.toLowerCase());
      return map.get(name);
    },
  };
}

/**
 * The body as bytes placed in the middle of a larger buffer filled with junk, so a verifier
 * that ignores `byteOffset`/`byteLength` fails.
 */
export function bodyBytes(body: string | Uint8Array): Uint8Array {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const backing = new Uint8Array(bytes.byteLength + 16).fill(0x7b); // "{"
  backing.set(bytes, 8);
  return backing.subarray(8, 8 + bytes.byteLength);
}

/** Builds a SignedRequest from a body (string or bytes) and a header object. */
export function signedRequest(
  body: string | Uint8Array,
  headers: Headers,
  init: { method?: string; url?: string } = {},
): SignedRequest {
  return {
    method: init.method ?? "POST",
    url: init.url ?? "/webhooks/test",
    headers: headerReader(headers),
    body: bodyBytes(body),
  };
}

/** Active secrets with indices 0, 1, … in order. */
export function secrets(...values: string[]): ActiveSecret[] {
  return values.map((value, index) => ({ index, value }));
}

/** Calls `fn` and returns the HookinboxError it throws; fails the test if it does not. */
export function rejection(fn: () => unknown): HookinboxError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(HookinboxError);
    return error as HookinboxError;
  }
  throw new Error("expected a HookinboxError, but nothing was thrown");
}

/**
 * Asserts that `fn` throws a HookinboxError with exactly `code` and `status`, and that its
 * message contains none of the `forbidden` strings (secrets, signatures, body).
 */
export function expectRejected(
  fn: () => unknown,
  code: ErrorCode,
  status: number,
  forbidden: readonly string[] = [],
): HookinboxError {
  const error = rejection(fn);
  expect({ code: error.code, status: error.status }).toEqual({ code, status });
  for (const secret of forbidden) {
    if (secret.length >= 6) expect(error.message).not.toContain(secret);
  }
  return error;
}

/** One verification, with the arguments spelled out. */
export function verify(
  verifier: Verifier,
  request: SignedRequest,
  active: readonly ActiveSecret[],
  nowMs: number,
): Verified {
  return verifier.verify(request, active, nowMs);
}

/**
 * What ingest does with a request to a scheme that has handshakes: verify first (a forged
 * handshake throws like any forged request), then ask the scheme with the matching secret.
 */
export function answerHandshake(
  scheme: ProviderScheme,
  request: SignedRequest,
  active: readonly ActiveSecret[],
  nowMs: number,
): HandshakeResponse | undefined {
  const verified = scheme.verifier.verify(request, active, nowMs);
  const secret = active.find((s) => s.index === verified.secretIndex);
  if (secret === undefined) throw new Error("verify returned an index that is not active");
  return scheme.handshake?.(request, verified, secret);
}

/** A fake IdentityContext over headers and a body string (json() parses it, like ingest). */
export function identityContext(headers: Headers, body?: string): IdentityContext {
  return {
    headers: headerReader(headers),
    ...(body === undefined ? {} : { body: new TextEncoder().encode(body) }),
    json() {
      try {
        return JSON.parse(body ?? "");
      } catch (error) {
        throw hookinboxError("HOOKINBOX_BODY_INVALID_JSON", undefined, error);
      }
    },
  };
}

export interface Vectors {
  github: { secret: string; body: string; header: string; signature: string }[];
  "standard-webhooks": {
    secret: string;
    id: string;
    timestamp: number;
    body: string;
    signature: string;
  }[];
  stripe: { secret: string; timestamp: number; body: string; signature: string }[];
  slack: { secret: string; timestamp: number; body: string; signature: string }[];
  square: { signatureKey: string; notificationUrl: string; body: string; signature: string }[];
  hubspot: {
    version: string;
    secret: string;
    method?: string;
    url?: string;
    body: string;
    timestamp?: number;
    signature: string;
  }[];
  twilio: {
    authToken: string;
    url: string;
    params: Record<string, string>;
    signature: string;
  }[];
  paddle: { secret: string; timestamp: number; body: string; signature: string }[];
  adyen: { hmacKeyHex: string; signedData: string; signature: string }[];
  discord: {
    publicKeyHex: string;
    timestamp: string;
    body: string;
    signatureHex: string;
  }[];
}

/** The providers' published signature test vectors, kept in the repo. */
const vectorsFile = fileURLToPath(new URL("../fixtures/vectors/providers.json", import.meta.url));

/**
 * Loads the providers' published signature vectors (test/fixtures/vectors/providers.json). Throws,
 * failing the calling test loudly, when the file is missing: the vectors are the independent
 * oracle and are never skipped.
 */
export function loadVectors(): Vectors {
  if (!existsSync(vectorsFile)) throw new Error(`provider vectors not found at ${vectorsFile}`);
  return JSON.parse(readFileSync(vectorsFile, "utf8")) as Vectors;
}

/** Returns a copy of `text` with the character at `index` replaced by a different one. */
export function flipChar(text: string, index: number): string {
  const c = text[index];
  if (c === undefined) throw new Error("index out of range");
  const replacement = c === "0" ? "1" : c === "a" ? "b" : c === "A" ? "B" : c === "x" ? "y" : "0";
  return text.slice(0, index) + replacement + text.slice(index + 1);
}
