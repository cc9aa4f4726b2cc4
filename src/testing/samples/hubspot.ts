// Payload: a webhook batch of one `contact.propertyChange` item as in HubSpot's Webhooks API
// docs (developers.hubspot.com/docs/api/webhooks, "Webhook payloads").
import { digits, mac } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

/**
 * HubSpot v3: `X-HubSpot-Signature-v3: <base64 HMAC-SHA256 of "{method}{uri}{body}{ts}">` with
 * `X-HubSpot-Request-Timestamp` in ms, keyed with the app's client secret. The body is a batch
 * (an array); each item's dedup key is built from its fields (portal, type, object, time,
 * property), so the sample derives `objectId`, `occurredAt` and `propertyValue` from the id.
 *
 * @example
 * ```ts
 * hubspotSample.build({ secret: "s", url: "https://hooks.example.com/webhooks/hubspot", nowMs: Date.now(), id: "1" });
 * ```
 */
export const hubspotSample: ProviderSample = {
  provider: "hubspot",
  origin: "developers.hubspot.com Webhooks API docs: webhook payload example",
  defaultType: "contact.propertyChange",
  unhandledType: "company.deletion",
  exampleSecret: "yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy",
  traits: () => ({ signs: "body", timestampWindowMs: 300_000, bodyFormat: "json" }),
  newId: () => digits(String(Math.random()), 10),
  sourceOptions: (url) => ({ publicUrl: new URL(url).origin }),
  build(input) {
    const type = input.type ?? this.defaultType;
    const objectId = Number(
      input.resource === undefined ? digits(input.id, 6) : digits(input.resource, 6),
    );
    const occurredAt = input.sequence ?? Number(`1${digits(input.id, 12)}`);
    const value = `lifecyclestage-${digits(input.id, 8)}`;
    const body =
      input.body ??
      JSON.stringify([
        {
          objectId,
          propertyName: "lifecyclestage",
          propertyValue: value,
          changeSource: "CRM_UI",
          eventId: Number(digits(input.id, 10)),
          subscriptionId: 2881778,
          portalId: 62515,
          appId: 1160452,
          occurredAt,
          subscriptionType: type,
          attemptNumber: input.redelivery ? 1 : 0,
        },
      ]);
    const ts = String(input.nowMs);
    return {
      url: input.url,
      headers: {
        "content-type": "application/json",
        "user-agent": "HubSpot Connect 2.0 (http://dev.hubspot.com/)",
        "x-hubspot-request-timestamp": ts,
        "x-hubspot-signature-v3": mac(
          "sha256",
          input.secret,
          `POST${input.url}${body}${ts}`,
          "base64",
        ),
      },
      body,
      eventId:
        input.body === undefined
          ? `62515:${type}:${objectId}:${occurredAt}:lifecyclestage=${value}`
          : undefined,
      type,
      version: String(occurredAt),
    };
  },
};
