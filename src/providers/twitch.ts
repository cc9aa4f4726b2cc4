/**
 * Twitch EventSub (webhook transport): `Twitch-Eventsub-Message-Signature: sha256=<hex>`,
 * HMAC-SHA256 over `{Twitch-Eventsub-Message-Id}{Twitch-Eventsub-Message-Timestamp}{raw body}`
 * keyed with the subscription's secret (UTF-8). The timestamp is RFC 3339 with up to nanosecond
 * precision; Twitch asks receivers to reject messages older than 10 minutes.
 */

import { signedWithTolerance } from "../config/source-fields.ts";
import { field, parseJsonOrUndefined } from "./body.ts";
import { decodeHex, hmac } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import {
  findMatchingSecret,
  readHeader,
  requireHeader,
  requireSecrets,
  requireTimestampHeader,
  taggedValue,
  utf8Secret,
} from "./match.ts";
import { checkTimestamp, checkTolerance, parseRfc3339 } from "./timestamps.ts";
import type {
  HandshakeResponse,
  IdentityContext,
  IdentitySpec,
  ProviderScheme,
  SignedRequest,
  Verified,
} from "./types.ts";

export { parseRfc3339 };

/**
 * Options of the Twitch EventSub scheme.
 *
 * @example
 * ```ts
 * const options: TwitchOptions = { toleranceMs: 600_000 };
 * ```
 */
export interface TwitchOptions {
  /** How far the message timestamp may be from now, both ways, in ms. Default 600 000 (Twitch's 10 min). */
  readonly toleranceMs?: number;
}

const HEADER = "twitch-eventsub-message-signature";
const ID_HEADER = "twitch-eventsub-message-id";
const TIMESTAMP_HEADER = "twitch-eventsub-message-timestamp";
const TYPE_HEADER = "twitch-eventsub-message-type";
const SUBSCRIPTION_TYPE_HEADER = "twitch-eventsub-subscription-type";

/**
 * The Twitch event type: the subscription type (`channel.follow`) for notifications; other
 * message types are prefixed so a handler of the subscription type never receives them:
 * `revocation.channel.follow`, `webhook_callback_verification.channel.follow`.
 *
 * @example
 * ```ts
 * twitchEventType(ctx); // "channel.follow"
 * ```
 */
export function twitchEventType(context: IdentityContext): string | undefined {
  const subscription = readHeader(context.headers, SUBSCRIPTION_TYPE_HEADER);
  if (subscription === undefined) return undefined;
  const message = readHeader(context.headers, TYPE_HEADER);
  return message === undefined || message === "notification"
    ? subscription
    : `${message}.${subscription}`;
}

/**
 * Where a Twitch EventSub message's identity lives: the message id header (kept on
 * redelivery), {@link twitchEventType}, the message timestamp, and the subscription id as
 * ordering key.
 *
 * @example
 * ```ts
 * twitchIdentity.id; // "header:twitch-eventsub-message-id"
 * ```
 */
export const twitchIdentity: IdentitySpec = Object.freeze({
  id: `header:${ID_HEADER}`,
  type: twitchEventType,
  occurredAt: `header:${TIMESTAMP_HEADER}`,
  orderingKey: "$.subscription.id",
});

/**
 * Twitch's `webhook_callback_verification` (message type header) is answered
 * `200 text/plain` with the body's `challenge`, verbatim; anything else is not a handshake.
 *
 * @example
 * ```ts
 * twitchHandshake(request)?.body; // "pogchamp-kappa-360noscope-vohiyo"
 * ```
 */
export function twitchHandshake(request: SignedRequest): HandshakeResponse | undefined {
  if (readHeader(request.headers, TYPE_HEADER) !== "webhook_callback_verification")
    return undefined;
  const challenge = field(parseJsonOrUndefined(request.body), "challenge");
  if (typeof challenge !== "string") return undefined;
  return { status: 200, headers: { "content-type": "text/plain; charset=utf-8" }, body: challenge };
}

/**
 * The Twitch EventSub scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. signature header absent or blank → HOOKINBOX_SIGNATURE_MISSING; no `=` →
 *    HOOKINBOX_SIGNATURE_MALFORMED; a tag other than `sha256` →
 *    HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED; message id header absent →
 *    HOOKINBOX_SIGNATURE_MISSING (it is signed);
 * 3. timestamp header absent → HOOKINBOX_TIMESTAMP_MISSING; not RFC 3339 →
 *    HOOKINBOX_TIMESTAMP_MALFORMED;
 * 4. every active secret; a digest that is not hex matches nothing; no match →
 *    HOOKINBOX_SIGNATURE_MISMATCH;
 * 5. then the window (default 10 min, both ways): HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE.
 * `handshake` answers `webhook_callback_verification` (see {@link twitchHandshake}).
 *
 * @example
 * ```ts
 * const scheme = twitchScheme();
 * scheme.verifier.verify(request, [{ index: 0, value: "subscription secret" }], Date.now());
 * ```
 */
export function twitchScheme(options: TwitchOptions = {}): ProviderScheme {
  const toleranceMs = checkTolerance(options.toleranceMs ?? 600_000);
  return {
    provider: "twitch",
    identity: twitchIdentity,
    handshake: twitchHandshake,
    verifier: {
      verify(request, secrets, nowMs): Verified {
        requireSecrets(secrets);
        const { headers } = request;
        const header = requireHeader(headers, HEADER);
        const digest = decodeHex(taggedValue(header, "sha256", HEADER));
        const id = requireHeader(headers, ID_HEADER);
        const timestamp = requireTimestampHeader(headers, TIMESTAMP_HEADER);
        const signedAt = parseRfc3339(timestamp);
        const secretIndex = findMatchingSecret(
          secrets,
          utf8Secret,
          (key) => hmac("sha256", key, [id, timestamp, request.body]),
          digest === undefined ? [] : [digest],
        );
        checkTimestamp(signedAt, nowMs, toleranceMs);
        return { secretIndex, signedAt };
      },
    },
  };
}

/**
 * A Twitch EventSub source (answers the callback verification). Returns `{ provider: "twitch", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { twitch: twitch({ secrets: [{ env: "TWITCH_SECRET" }] }) }
 * ```
 */
export const twitch = defineProvider({
  name: "twitch",
  options: signedWithTolerance,
  identity: twitchIdentity,
  docs: "#twitch-eventsub",
  headers: {
    signature: [
      "twitch-eventsub-message-signature",
      "twitch-eventsub-message-id",
      "twitch-eventsub-message-timestamp",
    ],
    context: [
      "twitch-eventsub-message-retry",
      "twitch-eventsub-message-type",
      "twitch-eventsub-subscription-type",
      "twitch-eventsub-subscription-version",
    ],
  },
  scheme: (_source, context) => twitchScheme(context.window),
});
