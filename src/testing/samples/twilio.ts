// Payload: a Programmable Messaging status callback (twilio.com/docs/messaging/guides/
// track-outbound-message-status): the form fields Twilio posts when a message is delivered.
import { randomUUID } from "node:crypto";
import { digits, mac } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

/**
 * Twilio: `X-Twilio-Signature: <base64 HMAC-SHA1>` keyed with the auth token over the full URL
 * followed by every POST parameter sorted by name (name + value). The dedup key is the
 * `I-Twilio-Idempotency-Token` header. Type `message.<status>` sets `MessageStatus`.
 *
 * @example
 * ```ts
 * twilioSample.build({ secret: "token", url: "https://hooks.example.com/webhooks/twilio", nowMs: Date.now(), id: "t1" });
 * ```
 */
export const twilioSample: ProviderSample = {
  provider: "twilio",
  origin: "twilio.com messaging docs: outbound message status callback parameters",
  defaultType: "message.delivered",
  unhandledType: "message.queued",
  exampleSecret: "12345678901234567890123456789012",
  traits: () => ({ signs: "body", bodyFormat: "form" }),
  newId: () => randomUUID(),
  sourceOptions: (url) => ({ publicUrl: new URL(url).origin }),
  build(input) {
    const type = input.type ?? this.defaultType;
    const status = type.startsWith("message.") ? type.slice("message.".length) : type;
    const sid = input.resource ?? `SM${digits(input.id, 32)}`;
    const params = new URLSearchParams(
      input.body ?? {
        AccountSid: "AC00000000000000000000000000000000",
        ApiVersion: "2010-04-01",
        From: "+15017122661",
        MessageSid: sid,
        MessageStatus: status,
        SmsSid: sid,
        SmsStatus: status,
        To: "+15558675310",
        ...(input.sequence === undefined ? {} : { SequenceNumber: String(input.sequence) }),
      },
    );
    const body = params.toString();
    const sorted = [...params.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const signedText = input.url + sorted.map(([name, value]) => name + value).join("");
    return {
      url: input.url,
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "user-agent": "TwilioProxy/1.1",
        "i-twilio-idempotency-token": input.id,
        "x-twilio-signature": mac("sha1", input.secret, signedText, "base64"),
      },
      body,
      eventId: input.id,
      type,
      ...(input.sequence === undefined ? {} : { version: String(input.sequence) }),
    };
  },
};
