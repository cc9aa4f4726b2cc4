/**
 * SendGrid (Twilio SendGrid) Event Webhook with signature verification on: an ECDSA P-256
 * signature (base64 of DER) in `X-Twilio-Email-Event-Webhook-Signature` over
 * `{X-Twilio-Email-Event-Webhook-Timestamp}{raw body}`, checked with the public verification key
 * from the dashboard (configured as the source's "secret": base64 of the DER key, or PEM). The
 * body is a JSON array of events, split into one event per item keyed by `sg_event_id`.
 */

import { createPublicKey, type KeyObject, verify as verifySignature } from "node:crypto";
import { signedWithTolerance } from "../config/source-fields.ts";
import { decodeBase64, memoizeKeys } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import { requireHeader, requireSecrets, requireTimestampHeader } from "./match.ts";
import { splitJson } from "./split.ts";
import { verifyTimestampedKeySignature } from "./timestamped-key-signature.ts";
import { checkTolerance } from "./timestamps.ts";
import type { IdentitySpec, ProviderScheme, Verified } from "./types.ts";

/**
 * Options of the SendGrid Event Webhook scheme.
 *
 * @example
 * ```ts
 * const options: SendgridOptions = { toleranceMs: 600_000 };
 * ```
 */
export interface SendgridOptions {
  /**
   * How far the signed timestamp (integer seconds) may be from now, both ways, in ms. Default
   * `Infinity`: SendGrid documents no window and retries a failed POST for up to 24 hours;
   * a replayed request is a duplicate anyway (each item is keyed by `sg_event_id`).
   */
  readonly toleranceMs?: number;
}

const SIGNATURE_HEADER = "x-twilio-email-event-webhook-signature";
const TIMESTAMP_HEADER = "x-twilio-email-event-webhook-timestamp";

/**
 * Turns SendGrid's verification key (base64 of the DER SubjectPublicKeyInfo, as the dashboard
 * shows it, or a PEM) into a P-256 public key, or `undefined` when it is not one.
 *
 * @example
 * ```ts
 * sendgridPublicKey("MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE…"); // KeyObject
 * ```
 */
export function sendgridPublicKey(value: string): KeyObject | undefined {
  const text = value.trim();
  try {
    const key = text.startsWith("-----BEGIN")
      ? createPublicKey(text)
      : createPublicKey({
          key: decodeBase64(text) ?? Buffer.alloc(0),
          format: "der",
          type: "spki",
        });
    return key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1"
      ? key
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where a SendGrid event's identity lives (read from ONE item of the batch): `sg_event_id`,
 * the `event` name, its `timestamp` (seconds), and the message (`sg_message_id`) as ordering key,
 * so a message's delivered, open and click events are handled in order.
 *
 * @example
 * ```ts
 * sendgridIdentity.id; // "$.sg_event_id"
 * ```
 */
export const sendgridIdentity: IdentitySpec = Object.freeze({
  id: "$.sg_event_id",
  type: "$.event",
  occurredAt: "$.timestamp",
  orderingKey: "$.sg_message_id",
});

/**
 * The SendGrid Event Webhook scheme. Verification, in order:
 * 1. no active key → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. signature header absent or blank → HOOKINBOX_SIGNATURE_MISSING; timestamp header absent →
 *    HOOKINBOX_TIMESTAMP_MISSING; with a finite window, not canonical integer seconds →
 *    HOOKINBOX_TIMESTAMP_MALFORMED;
 * 3. every active key that is a P-256 public key (others are skipped; none usable →
 *    HOOKINBOX_SOURCE_NO_ACTIVE_SECRET); a signature that is not canonical base64 of a DER
 *    signature matches nothing; no key verifies it → HOOKINBOX_SIGNATURE_MISMATCH;
 * 4. then the window, when finite: HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE.
 * `split` makes one event per array item.
 *
 * @example
 * ```ts
 * const scheme = sendgridScheme();
 * scheme.verifier.verify(request, [{ index: 0, value: "MFkwEwYH…" }], Date.now());
 * const items = scheme.split?.(request); // one per event, keyed by sg_event_id
 * ```
 */
export function sendgridScheme(options: SendgridOptions = {}): ProviderScheme {
  const toleranceMs = checkTolerance(options.toleranceMs ?? Number.POSITIVE_INFINITY);
  const keyOf = memoizeKeys(sendgridPublicKey);
  return {
    provider: "sendgrid",
    identity: sendgridIdentity,
    split: (request) => splitJson(request.body, []),
    verifier: {
      verify(request, secrets, nowMs): Verified {
        requireSecrets(secrets);
        const signatureText = requireHeader(request.headers, SIGNATURE_HEADER);
        const timestamp = requireTimestampHeader(request.headers, TIMESTAMP_HEADER);
        return verifyTimestampedKeySignature({
          timestamp,
          signature: decodeBase64(signatureText),
          body: request.body,
          secrets,
          nowMs,
          toleranceMs,
          keyOf,
          check: verifyDer,
          noKeyMessage: "no active secret is a P-256 public key (base64 DER or PEM)",
        });
      },
    },
  };
}

function verifyDer(key: KeyObject, message: Buffer, signature: Buffer): boolean {
  try {
    return verifySignature("sha256", message, { key, dsaEncoding: "der" }, signature);
  } catch {
    return false;
  }
}

/**
 * A SendGrid Event Webhook source (ECDSA verification key; batches split per `sg_event_id`). Returns `{ provider: "sendgrid", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { sendgrid: sendgrid({ secrets: [{ env: "SENDGRID_VERIFICATION_KEY" }] }) }
 * ```
 */
export const sendgrid = defineProvider({
  name: "sendgrid",
  options: signedWithTolerance,
  identity: sendgridIdentity,
  docs: "#sendgrid-event-webhook",
  headers: {
    signature: ["x-twilio-email-event-webhook-signature", "x-twilio-email-event-webhook-timestamp"],
  },
  scheme: (_source, context) => sendgridScheme(context.window),
});
