// The verification shared by public-key schemes that sign `{timestamp}{raw body}` (Discord's
// Ed25519, SendGrid's ECDSA P-256): try each active key in turn, say when no secret is a usable
// key, and check the window only after a signature matched.
import { hookinboxError } from "../errors.ts";
import { asBuffer } from "./crypto.ts";
import { checkTimestamp, parseTimestampSeconds } from "./timestamps.ts";
import type { ActiveSecret, Verified } from "./types.ts";

/** What one scheme brings: its key parser, its signature check and its no-usable-key text. */
export interface TimestampedKeySignature<K> {
  readonly timestamp: string;
  /** The decoded signature, or undefined when it did not decode (then nothing matches). */
  readonly signature: Buffer | undefined;
  readonly body: Uint8Array;
  readonly secrets: readonly ActiveSecret[];
  readonly nowMs: number;
  /** Infinity for no window. */
  readonly toleranceMs: number;
  keyOf(secret: string): K | undefined;
  check(key: K, message: Buffer, signature: Buffer): boolean;
  /** The message of HOOKINBOX_SOURCE_NO_ACTIVE_SECRET when no secret parses as a key. */
  readonly noKeyMessage: string;
}

/**
 * Verifies a signature over the timestamp followed by the raw body with the first active key
 * that matches.
 *
 * @example
 * return verifyTimestampedKeySignature({ timestamp, signature, body: request.body, secrets,
 *   nowMs, toleranceMs, keyOf, check: verifyDer, noKeyMessage: "no active secret is a key" });
 */
export function verifyTimestampedKeySignature<K>(input: TimestampedKeySignature<K>): Verified {
  const windowed = input.toleranceMs !== Number.POSITIVE_INFINITY;
  const signedAt = windowed ? parseTimestampSeconds(input.timestamp) : undefined;
  const message = Buffer.concat([Buffer.from(input.timestamp, "utf8"), asBuffer(input.body)]);
  let usable = 0;
  let secretIndex: number | undefined;
  for (const secret of input.secrets) {
    const key = input.keyOf(secret.value);
    if (key === undefined) continue;
    usable++;
    if (input.signature === undefined) continue;
    if (input.check(key, message, input.signature)) {
      secretIndex = secret.index;
      break;
    }
  }
  if (usable === 0) throw hookinboxError("HOOKINBOX_SOURCE_NO_ACTIVE_SECRET", input.noKeyMessage);
  if (secretIndex === undefined) throw hookinboxError("HOOKINBOX_SIGNATURE_MISMATCH");
  if (signedAt === undefined) return { secretIndex };
  checkTimestamp(signedAt, input.nowMs, input.toleranceMs);
  return { secretIndex, signedAt };
}
