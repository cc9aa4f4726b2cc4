// Payload: a `conversation.user.created` notification as in Intercom's webhook docs
// (developers.intercom.com, "Webhook notification object"), trimmed.
import { mac, randomToken } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

/**
 * Intercom: `X-Hub-Signature: sha1=<hex HMAC-SHA1 of the body>` keyed with the app's client
 * secret; the dedup key is the notification `id`.
 *
 * @example
 * ```ts
 * intercomSample.build({ secret: "s", url, nowMs: Date.now(), id: intercomSample.newId() });
 * ```
 */
export const intercomSample: ProviderSample = {
  provider: "intercom",
  origin: "developers.intercom.com webhook notification object example, trimmed",
  defaultType: "conversation.user.created",
  unhandledType: "contact.tag.created",
  exampleSecret: "hookinbox-example-intercom-client-secret",
  traits: () => ({ signs: "body", bodyFormat: "json" }),
  newId: () => `notif_${randomToken(8, "abcdef0123456789")}-${randomToken(4, "abcdef0123456789")}`,
  build(input) {
    const type = input.type ?? this.defaultType;
    const at = input.sequence ?? Math.floor(input.nowMs / 1000);
    const body =
      input.body ??
      JSON.stringify({
        type: "notification_event",
        app_id: "a86dr8yl",
        data: {
          type: "notification_event_data",
          item: {
            type: "conversation",
            id: input.resource ?? "147",
            created_at: 1719492819,
            updated_at: at,
            state: "open",
            source: { type: "conversation", body: "<p>Hi, can you help?</p>" },
          },
        },
        links: {},
        id: input.id,
        topic: type,
        delivery_status: "pending",
        delivery_attempts: 1,
        delivered_at: 0,
        first_sent_at: at,
        created_at: at,
        self: null,
      });
    return {
      url: input.url,
      headers: {
        "content-type": "application/json",
        "user-agent": "Intercom-Webhooks",
        "x-hub-signature": `sha1=${mac("sha1", input.secret, body, "hex")}`,
      },
      body,
      eventId: input.body === undefined ? input.id : undefined,
      type,
      version: String(at),
    };
  },
};
