// Payload: a `processed` event of SendGrid's Event Webhook reference (an array of events),
// trimmed.
import { createPrivateKey, createPublicKey, sign } from "node:crypto";
import { presetSample } from "./preset-kit.ts";
import { randomToken, seconds } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

/** The signing key of the example: a P-256 private key, PKCS#8 DER in base64 (test only). */
const EXAMPLE_PRIVATE_KEY =
  "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg7ZMJqEo8nKFYqIpJI2XQkaUGB0Y5bhOk9g1KllLAP/ihRANCAAQbm4tC39gnwyFJxs4KWBg4JptJM15unC7pjWdCPX5WUmLv0H/cKLAaeEL+q08LWR5nimj9bsaUyaO/ORLgSrUu";

function privateKey(secret: string) {
  const text = secret.trim();
  return text.startsWith("-----BEGIN")
    ? createPrivateKey(text)
    : createPrivateKey({ key: Buffer.from(text, "base64"), format: "der", type: "pkcs8" });
}

const base = presetSample({
  provider: "sendgrid",
  origin: "twilio.com/docs/sendgrid, Event Webhook reference: processed event",
  defaultType: "processed",
  unhandledType: "group_resubscribe",
  exampleSecret: EXAMPLE_PRIVATE_KEY,
  traits: { signs: "body", bodyFormat: "json" },
  newId: () => randomToken(22),
  payload: (input, type) => ({
    body: [
      {
        email: "example@test.com",
        timestamp: input.sequence ?? 1_764_504_000,
        "smtp-id": "<14c5d75ce93.dfd.64b469@ismtpd-555>",
        event: type,
        category: ["cat facts"],
        sg_event_id: input.id,
        sg_message_id: `${input.resource ?? "14c5d75ce93.dfd.64b469"}.filter0001.16648.5515E0B88.0`,
      },
    ],
    eventId: input.id,
  }),
  sign: (body, { secret, nowMs }) => {
    const t = String(seconds(nowMs));
    const signature = sign("sha256", Buffer.from(t + body), privateKey(secret));
    return {
      "x-twilio-email-event-webhook-signature": signature.toString("base64"),
      "x-twilio-email-event-webhook-timestamp": t,
    };
  },
});

/**
 * SendGrid Event Webhook: ECDSA P-256 (SHA-256, DER, base64) over `{timestamp}{body}`. The
 * sample signs with a private key (the `secret`: PKCS#8 DER in base64, or PEM); the receiver
 * is configured with its public key (`receiverSecret`: SPKI DER in base64, as SendGrid shows it).
 *
 * @example
 * ```ts
 * sendgridSample.receiverSecret?.(sendgridSample.exampleSecret); // "MFkwEwYHKoZIzj0CAQYI…"
 * ```
 */
export const sendgridSample: ProviderSample = {
  ...base,
  receiverSecret: (secret) =>
    createPublicKey(privateKey(secret)).export({ format: "der", type: "spki" }).toString("base64"),
};
