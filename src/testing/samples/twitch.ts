// Payloads: a `channel.follow` notification and the `webhook_callback_verification` challenge
// as in Twitch's EventSub docs (dev.twitch.tv/docs/eventsub/handling-webhook-events), trimmed.
import { randomUUID } from "node:crypto";
import { mac, randomToken } from "./sign.ts";
import type { ProviderSample, SampleInput, SampleRequest } from "./types.ts";

function subscription(input: SampleInput, type: string, status: string) {
  return {
    id: input.resource ?? "f1c2a387-161a-49f9-a165-0f21d7a4e1c4",
    status,
    type,
    version: "2",
    cost: 0,
    condition: { broadcaster_user_id: "1337", moderator_user_id: "1337" },
    transport: { method: "webhook", callback: input.url },
    created_at: "2019-11-16T10:11:12.634234626Z",
  };
}

function signed(
  input: SampleInput,
  body: string,
  messageType: string,
  subscriptionType: string,
  messageId: string,
): SampleRequest {
  const timestamp = new Date(input.nowMs).toISOString();
  return {
    url: input.url,
    headers: {
      "content-type": "application/json",
      "twitch-eventsub-message-id": messageId,
      "twitch-eventsub-message-retry": input.redelivery ? "1" : "0",
      "twitch-eventsub-message-type": messageType,
      "twitch-eventsub-message-timestamp": timestamp,
      "twitch-eventsub-subscription-type": subscriptionType,
      "twitch-eventsub-subscription-version": "2",
      "twitch-eventsub-message-signature": `sha256=${mac("sha256", input.secret, messageId + timestamp + body, "hex")}`,
    },
    body,
    eventId: messageId,
    type: messageType === "notification" ? subscriptionType : `${messageType}.${subscriptionType}`,
  };
}

/**
 * Twitch EventSub: `Twitch-Eventsub-Message-Signature: sha256=<hex HMAC-SHA256 of
 * "{message id}{timestamp}{body}">`; the message id is the dedup key. Type
 * `webhook_callback_verification` sends the challenge, answered with the challenge as text.
 *
 * @example
 * ```ts
 * twitchSample.build({ secret: "s3cre7", url, nowMs: Date.now(), id: twitchSample.newId() });
 * ```
 */
export const twitchSample: ProviderSample = {
  provider: "twitch",
  origin: "dev.twitch.tv EventSub docs: channel.follow notification and challenge",
  defaultType: "channel.follow",
  unhandledType: "channel.raid",
  handshakeType: "webhook_callback_verification",
  exampleSecret: "hookinbox-example-twitch-secret",
  traits: () => ({ signs: "body", timestampWindowMs: 600_000, bodyFormat: "json" }),
  newId: () => randomUUID(),
  build(input) {
    const type = input.type ?? this.defaultType;
    const at = new Date(
      input.sequence === undefined ? input.nowMs : input.sequence * 1000,
    ).toISOString();
    const body =
      input.body ??
      JSON.stringify({
        subscription: subscription(input, type, "enabled"),
        event: {
          user_id: "1234",
          user_login: "cool_user",
          user_name: "Cool_User",
          broadcaster_user_id: "1337",
          broadcaster_user_login: "cooler_user",
          broadcaster_user_name: "Cooler_User",
          followed_at: at,
        },
      });
    return { ...signed(input, body, "notification", type, input.id), version: at };
  },
  handshake(input) {
    const challenge = `pogchamp-kappa-${randomToken(12)}`;
    const body = JSON.stringify({
      challenge,
      subscription: subscription(input, this.defaultType, "webhook_callback_verification_pending"),
    });
    return {
      request: signed(input, body, "webhook_callback_verification", this.defaultType, input.id),
      accepts: (status, text) => status === 200 && text === challenge,
    };
  },
};
