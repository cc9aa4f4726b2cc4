/**
 * Twitch EventSub (webhook transport): `Twitch-Eventsub-Message-Signature: sha256=<hex>`,
 * HMAC-SHA256 over `{Twitch-Eventsub-Message-Id}{Twitch-Eventsub-Message-Timestamp}{raw body}`
 * keyed with the subscription's secret (UTF-8). The timestamp is RFC 3339 with up to nanosecond
 * precision; Twitch asks receivers to reject messages older than 10 minutes.
 */

import { hookinboxError } from "../errors.ts";
import { field, parseJsonOrUndefined } from "./body.ts";
import { decodeHex, hmac } from "./crypto.ts";
import {
  findMatchingSecret,
  readHeader,
  requireHeader,
  requireSecrets,
  requireTimestampHeader,
  taggedValue,
  utf8Secret,
} from "./match.ts";
import { checkTimestamp, checkTolerance } from "./timestamps.ts";
import type {
  HandshakeResponse,
  IdentityContext,
  IdentitySpec,
  ProviderScheme,
  SignedRequest,
  Verified,
} from "./types.ts";

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

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Parses an RFC 3339 date-time (`2019-11-16T10:11:12.634234626Z`; fractions beyond ms are
 * truncated) into ms since the epoch. Calendar fields are range-checked; leap seconds rejected.
 *
 * @throws HookinboxError HOOKINBOX_TIMESTAMP_MALFORMED.
 * @example
 * ```ts
 * parseRfc3339("2023-11-14T22:13:20.123456789Z"); // 1_700_000_000_123
 * ```
 */
export function parseRfc3339(value: string): number {
  const match = RFC3339.exec(value);
  if (match === null) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MALFORMED", "expected an RFC 3339 date-time");
  }
  const [, y, mo, d, h, mi, s, fraction = "", zone = "Z"] = match;
  const month = Number(mo);
  const day = Number(d);
  const zoneOk =
    zone.length === 1 || (Number(zone.slice(1, 3)) <= 23 && Number(zone.slice(4, 6)) <= 59);
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > 31 ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59 ||
    !zoneOk
  ) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MALFORMED", "date-time field out of range");
  }
  const ms = fraction.padEnd(3, "0").slice(0, 3);
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}${zone.toUpperCase()}`;
  const parsed = Date.parse(iso);
  // Date.parse rolls Feb 30 over to March; compare the day back to catch it.
  if (Number.isNaN(parsed) || new Date(parsed + offsetMs(zone)).getUTCDate() !== day) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MALFORMED", "not a calendar date-time");
  }
  return parsed;
}

function offsetMs(zone: string): number {
  if (zone === "Z" || zone === "z") return 0;
  const sign = zone.startsWith("-") ? -1 : 1;
  return sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
}

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
