/**
 * Mailgun: the proof is in the JSON body, not in a header. `signature` holds `timestamp`
 * (seconds), `token` (50 random characters) and `signature`, the hex HMAC-SHA256 of
 * `{timestamp}{token}` keyed with the account's HTTP webhook signing key (UTF-8); events of a
 * subaccount's domain also carry `parent-signature`, the same MAC with the primary account's key.
 *
 * The MAC covers the timestamp and the token only, never `event-data`: a captured signature
 * could be pasted onto other event data while its timestamp is in the window. So the scheme
 * remembers every token it accepted for the window, with the event id it came with, and refuses
 * the same token with another event id (HOOKINBOX_SIGNATURE_REPLAYED). The same token with the
 * same event id is a redelivery, deduplicated as usual.
 */

import { signedWithTolerance } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { field, parseJsonOrUndefined, path, scalarText } from "./body.ts";
import { decodeHex, hmac } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import { findMatchingSecret, requireSecrets, utf8Secret } from "./match.ts";
import { checkTimestamp, checkTolerance, parseTimestamp } from "./timestamps.ts";
import type { IdentitySpec, ProviderScheme, Verified } from "./types.ts";

/**
 * Options of the Mailgun scheme.
 *
 * @example
 * ```ts
 * const options: MailgunOptions = { toleranceMs: 300_000, maxTokens: 10_000 };
 * ```
 */
export interface MailgunOptions {
  /** The window around the signed timestamp (default 5 min; Mailgun documents none). */
  readonly toleranceMs?: number;
  /** At most this many accepted tokens are remembered (default 100 000, oldest dropped). */
  readonly maxTokens?: number;
}

/**
 * Where a Mailgun event's identity lives: `event-data.id` (unique per event), its `event`
 * (`delivered`, `failed`, `opened`…), its `timestamp` (seconds, with a fraction), and the
 * message's `Message-Id` as ordering key.
 *
 * @example
 * ```ts
 * mailgunIdentity.id; // "$.event-data.id"
 * ```
 */
export const mailgunIdentity: IdentitySpec = Object.freeze({
  id: "$.event-data.id",
  type: "$.event-data.event",
  occurredAt: "$.event-data.timestamp",
  orderingKey: "$.event-data.message.headers.message-id",
});

/** The signature object of a Mailgun body, as strings. */
interface MailgunSignature {
  readonly timestamp: string;
  readonly token: string;
  readonly signatures: readonly string[];
  readonly eventId: string | undefined;
}

/**
 * Reads `signature.{timestamp, token, signature, parent-signature}` and `event-data.id`.
 *
 * @throws HookinboxError HOOKINBOX_SIGNATURE_MISSING when the body has no signature object,
 *   HOOKINBOX_SIGNATURE_MALFORMED when a part is not a string (or a number for the timestamp).
 */
function readSignature(body: Uint8Array): MailgunSignature {
  const json = parseJsonOrUndefined(body);
  const signature = field(json, "signature");
  if (typeof signature !== "object" || signature === null || Array.isArray(signature)) {
    throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", "expected a signature object in the body");
  }
  const timestamp = scalarText(field(signature, "timestamp"));
  const token = field(signature, "token");
  const mac = field(signature, "signature");
  const parent = field(signature, "parent-signature");
  if (timestamp === undefined) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MISSING", "expected signature.timestamp");
  }
  if (typeof token !== "string" || token === "" || typeof mac !== "string") {
    throw hookinboxError(
      "HOOKINBOX_SIGNATURE_MALFORMED",
      "expected signature.token and signature.signature strings",
    );
  }
  const signatures = typeof parent === "string" ? [mac, parent] : [mac];
  return { timestamp, token, signatures, eventId: scalarText(path(json, "event-data", "id")) };
}

/**
 * Remembers accepted tokens for the window: a token seen again with another event id is a
 * replayed signature. Entries older than the window are dropped on each insert; past
 * `maxTokens` the oldest go first (insertion order).
 */
class TokenMemory {
  private readonly seen = new Map<string, { eventId: string; atMs: number }>();

  constructor(
    private readonly windowMs: number,
    private readonly maxTokens: number,
  ) {}

  /** Throws HOOKINBOX_SIGNATURE_REPLAYED when `token` came earlier with another event id. */
  check(token: string, eventId: string): void {
    const earlier = this.seen.get(token);
    if (earlier !== undefined && earlier.eventId !== eventId) {
      throw hookinboxError("HOOKINBOX_SIGNATURE_REPLAYED", "this token came with another event");
    }
  }

  remember(token: string, eventId: string, signedAtMs: number): void {
    if (this.seen.has(token)) return;
    for (const [key, entry] of this.seen) {
      if (signedAtMs - entry.atMs <= this.windowMs * 2 && this.seen.size < this.maxTokens) break;
      this.seen.delete(key);
    }
    this.seen.set(token, { eventId, atMs: signedAtMs });
  }
}

/**
 * The Mailgun scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. no `signature` object in a JSON body → HOOKINBOX_SIGNATURE_MISSING; no timestamp →
 *    HOOKINBOX_TIMESTAMP_MISSING; token or signature not strings → HOOKINBOX_SIGNATURE_MALFORMED;
 *    a timestamp that is not integer seconds → HOOKINBOX_TIMESTAMP_MALFORMED;
 * 3. every active signing key against `signature` and `parent-signature` (a value that is not
 *    hex matches nothing) → HOOKINBOX_SIGNATURE_MISMATCH;
 * 4. the timestamp outside the window → HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE;
 * 5. the token accepted before with another `event-data.id` → HOOKINBOX_SIGNATURE_REPLAYED.
 *
 * @example
 * ```ts
 * const scheme = mailgunScheme({ toleranceMs: 300_000 });
 * scheme.verifier.verify(request, [{ index: 0, value: "key-…" }], Date.now()); // { secretIndex: 0, signedAt }
 * ```
 */
export function mailgunScheme(options: MailgunOptions = {}): ProviderScheme {
  const toleranceMs = checkTolerance(options.toleranceMs ?? 300_000);
  const tokens = new TokenMemory(toleranceMs, options.maxTokens ?? 100_000);
  return {
    provider: "mailgun",
    identity: mailgunIdentity,
    verifier: {
      verify(request, secrets, nowMs): Verified {
        requireSecrets(secrets);
        const signed = readSignature(request.body);
        const signedAt = parseTimestamp(signed.timestamp, "s");
        const candidates = signed.signatures
          .map((value) => decodeHex(value))
          .filter((value) => value !== undefined);
        const secretIndex = findMatchingSecret(
          secrets,
          utf8Secret,
          (key) => hmac("sha256", key, [signed.timestamp, signed.token]),
          candidates,
        );
        checkTimestamp(signedAt, nowMs, toleranceMs);
        const eventId = signed.eventId ?? "";
        tokens.check(signed.token, eventId);
        tokens.remember(signed.token, eventId, signedAt);
        return { secretIndex, signedAt };
      },
    },
  };
}

/**
 * A Mailgun source (signature object in the body, 5 min window, token replay refused). Returns `{ provider: "mailgun", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { mailgun: mailgun({ secrets: [{ env: "MAILGUN_WEBHOOK_SIGNING_KEY" }] }) }
 * ```
 */
export const mailgun = defineProvider({
  name: "mailgun",
  options: signedWithTolerance,
  identity: mailgunIdentity,
  docs: "#mailgun",
  // Signature headers empty: the signature is in the JSON body.
  headers: { signature: [] },
  scheme: (_source, context) => mailgunScheme(context.window),
});
