// Payloads: the Events API `event_callback` envelope and `app_mention` event, and the
// `url_verification` handshake, as in Slack's Events API docs (api.slack.com/apis/events-api).
import { randomToken, seconds, v0Headers } from "./sign.ts";
import type { ProviderSample, SampleInput, SampleRequest } from "./types.ts";

function signed(
  input: SampleInput,
  body: string,
  type: string,
  eventId: string | undefined,
): SampleRequest {
  return {
    url: input.url,
    headers: {
      "content-type": "application/json",
      "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
      ...v0Headers(
        input.secret,
        input.nowMs,
        body,
        "x-slack-signature",
        "x-slack-request-timestamp",
      ),
      ...(input.redelivery
        ? { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" }
        : {}),
    },
    body,
    eventId,
    type,
  };
}

/**
 * Slack Events API: `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:{ts}:{body}">` with
 * `X-Slack-Request-Timestamp`; `event_id` is the dedup key. Type `url_verification` sends the
 * handshake, answered with the challenge.
 *
 * @example
 * ```ts
 * slackSample.handshake?.({ secret: "s", url, nowMs: Date.now(), id: "x" }).request.body;
 * ```
 */
export const slackSample: ProviderSample = {
  provider: "slack",
  origin: "api.slack.com Events API docs: event_callback envelope, app_mention, url_verification",
  defaultType: "app_mention",
  unhandledType: "emoji_changed",
  handshakeType: "url_verification",
  exampleSecret: "8f742231b10e8888abcd99yyyzzz85a5",
  traits: () => ({ signs: "body", timestampWindowMs: 300_000, bodyFormat: "json" }),
  newId: () => `Ev${randomToken(9, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")}`,
  build(input) {
    const type = input.type ?? this.defaultType;
    const at = input.sequence ?? seconds(input.nowMs);
    const body =
      input.body ??
      JSON.stringify({
        token: "XXYYZZ",
        team_id: "T123ABC456",
        api_app_id: "A123ABC456",
        event: {
          type,
          user: "U123ABC456",
          text: "<@U0LAN0Z89> is it everything a river should be?",
          ts: `${at}.000200`,
          channel: input.resource ?? "C123ABC456",
          event_ts: `${at}.000200`,
        },
        type: "event_callback",
        authorizations: [{ team_id: "T123ABC456", user_id: "U0LAN0Z89", is_bot: true }],
        event_id: input.id,
        event_time: at,
      });
    return {
      ...signed(input, body, type, input.body === undefined ? input.id : undefined),
      version: String(at),
    };
  },
  handshake(input) {
    const challenge = randomToken(48);
    const body = JSON.stringify({
      token: "Jhj5dZrVaK7ZwHHjRyZWjbDl",
      challenge,
      type: "url_verification",
    });
    return {
      request: signed(input, body, "url_verification", undefined),
      accepts: (status, text) =>
        status === 200 && (text === challenge || text.includes(`"${challenge}"`)),
    };
  },
};
