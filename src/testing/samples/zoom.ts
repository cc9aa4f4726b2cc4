// Payloads: `meeting.started` and the `endpoint.url_validation` challenge as in Zoom's webhook
// docs (developers.zoom.us/docs/api/webhooks), trimmed.
import { digits, mac, randomToken, v0Headers } from "./sign.ts";
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
      "user-agent": "Zoom Marketplace/1.0a",
      ...v0Headers(input.secret, input.nowMs, body, "x-zm-signature", "x-zm-request-timestamp"),
    },
    body,
    eventId,
    type,
  };
}

/**
 * Zoom: `x-zm-signature: v0=<hex HMAC-SHA256 of "v0:{ts}:{body}">` with
 * `x-zm-request-timestamp`. Zoom has no event id; the key is `event:event_ts:object id`, so
 * the sample derives `event_ts` and the meeting id from the id (or from `sequence` and
 * `resource`). Type `endpoint.url_validation` sends the challenge.
 *
 * @example
 * ```ts
 * zoomSample.build({ secret: "token", url, nowMs: Date.now(), id: "z1" }).eventId; // "meeting.started:…"
 * ```
 */
export const zoomSample: ProviderSample = {
  provider: "zoom",
  origin: "developers.zoom.us webhook docs: meeting.started and endpoint.url_validation",
  defaultType: "meeting.started",
  unhandledType: "user.presence_status_updated",
  handshakeType: "endpoint.url_validation",
  exampleSecret: "hookinbox_example_zoom_secret_token",
  traits: () => ({ signs: "body", timestampWindowMs: 300_000, bodyFormat: "json" }),
  newId: () => randomToken(16),
  build(input) {
    const type = input.type ?? this.defaultType;
    const eventTs = input.sequence ?? Number(`1${digits(input.id, 12)}`);
    const meeting = input.resource ?? digits(input.id, 11);
    const body =
      input.body ??
      JSON.stringify({
        event: type,
        event_ts: eventTs,
        payload: {
          account_id: "AAAAAABBBB",
          object: {
            id: meeting,
            uuid: "4444AAAiAAAAAiAiAiiAii==",
            host_id: "x1yCzABCDEfg23HiJKl4mN",
            topic: "My Meeting",
            type: 2,
            start_time: "2021-07-13T21:44:51Z",
            timezone: "America/Los_Angeles",
            duration: 60,
          },
        },
      });
    const eventId = input.body === undefined ? `${type}:${eventTs}:${meeting}` : undefined;
    return { ...signed(input, body, type, eventId), version: String(eventTs) };
  },
  handshake(input) {
    const plainToken = randomToken(22);
    const body = JSON.stringify({
      payload: { plainToken },
      event_ts: input.nowMs,
      event: "endpoint.url_validation",
    });
    const encryptedToken = mac("sha256", input.secret, plainToken, "hex");
    return {
      request: signed(input, body, "endpoint.url_validation", undefined),
      accepts(status, text) {
        try {
          const answer = JSON.parse(text) as { plainToken?: unknown; encryptedToken?: unknown };
          return (
            status === 200 &&
            answer.plainToken === plainToken &&
            answer.encryptedToken === encryptedToken
          );
        } catch {
          return false;
        }
      },
    };
  },
};
