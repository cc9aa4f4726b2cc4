// Payload: the example message of the Standard Webhooks specification
// (standard-webhooks/standard-webhooks, spec/standard-webhooks.md, "Payload structure").
import { mac, randomToken, seconds } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

/**
 * Standard Webhooks (Svix, Clerk, Resend…): `webhook-id`, `webhook-timestamp` and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed with the
 * base64-decoded part of `whsec_…`.
 *
 * @example
 * ```ts
 * standardWebhooksSample.build({ secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", url, nowMs: Date.now(), id: "msg_1" });
 * ```
 */
export const standardWebhooksSample: ProviderSample = {
  provider: "standard-webhooks",
  origin: "Standard Webhooks specification, payload structure example",
  defaultType: "contact.created",
  unhandledType: "contact.archived",
  exampleSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  traits: () => ({ signs: "body", timestampWindowMs: 300_000, bodyFormat: "json" }),
  newId: () => `msg_${randomToken(27)}`,
  build(input) {
    const t = seconds(input.nowMs);
    const type = input.type ?? this.defaultType;
    const occurred = input.sequence === undefined ? input.nowMs : input.sequence * 1000;
    const body =
      input.body ??
      JSON.stringify({
        type,
        timestamp: new Date(occurred).toISOString(),
        data: {
          id: input.resource ?? "1f81eb52-5198-4599-803e-771906343485",
          type: "user",
          first_name: "Jane",
          ...(input.sequence === undefined ? {} : { version: input.sequence }),
        },
      });
    const key = Buffer.from(input.secret.replace(/^whsec_/, ""), "base64");
    return {
      url: input.url,
      headers: {
        "content-type": "application/json",
        "webhook-id": input.id,
        "webhook-timestamp": String(t),
        "webhook-signature": `v1,${mac("sha256", key, `${input.id}.${t}.${body}`, "base64")}`,
      },
      body,
      eventId: input.id,
      type,
      ...(input.sequence === undefined ? {} : { version: String(input.sequence) }),
    };
  },
};
