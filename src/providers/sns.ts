/**
 * Amazon SNS HTTP(S) subscriptions. The signature is in the JSON body: `Signature` (base64) over
 * the canonical string of the message's fields (`Name\nvalue\n` for each signed field present, in
 * a fixed order), RSA with SHA1 (`SignatureVersion` 1) or SHA256 (2), checked with the certificate
 * at `SigningCertURL`, which must be HTTPS on `sns.<region>.amazonaws.com` (or `.com.cn`):
 * anything else is refused before any network call. Only the configured topics are accepted.
 * `SubscriptionConfirmation` messages are stored like events (an operator confirms them with their
 * `SubscribeURL`), and confirmed by hookinbox itself when the source sets `autoConfirm`.
 */

import { z } from "zod";
import { duration, unsigned } from "../config/source-fields.ts";
import { hookinboxError, isHookinboxError } from "../errors.ts";
import { field, utf8Text } from "./body.ts";
import { decodeBase64 } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import {
  certificateSource,
  defaultKeyTimeoutMs,
  fetchKeyText,
  httpKeyFetcher,
  type KeyFetchOptions,
  type KeyUrlRule,
  rsaSignatureValid,
} from "./keys/index.ts";
import { checkTimestamp, checkTolerance } from "./timestamps.ts";
import type { AsyncVerifier, IdentitySpec, ProviderScheme, SignedRequest } from "./types.ts";

/**
 * Options of the SNS scheme.
 *
 * @example
 * ```ts
 * const options: SnsOptions = { topicArns: ["arn:aws:sns:eu-west-1:123456789012:orders"] };
 * ```
 */
export interface SnsOptions {
  /** The topics this source accepts; a message signed by AWS for any other topic is refused. */
  readonly topicArns: readonly string[];
  /**
   * Confirm a `SubscriptionConfirmation` by fetching its `SubscribeURL` (an allowlisted SNS
   * host) before storing it. Default `false`: it is stored, and an operator confirms it.
   */
  readonly autoConfirm?: boolean;
  /**
   * How far the signed `Timestamp` may be from now, both ways, in ms. Default `Infinity`: SNS
   * retries a delivery with the same signed message for as long as its delivery policy says.
   */
  readonly toleranceMs?: number;
  /** Fetching and caching the signing certificates (tests inject a fetcher). */
  readonly keys?: KeyFetchOptions;
}

/** `sns.<region>.amazonaws.com` (and the China partition's `.amazonaws.com.cn`). */
const SNS_HOST = /^sns\.[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d\.amazonaws\.com(\.cn)?$/;

/** Where SNS signing certificates may be fetched from. */
export const snsCertificateRule: KeyUrlRule = Object.freeze({
  host: SNS_HOST,
  path: /^\/SimpleNotificationService-[A-Za-z0-9]+\.pem$/,
});

/** Where a `SubscribeURL` may point. */
export const snsSubscribeRule: KeyUrlRule = Object.freeze({ host: SNS_HOST, path: /^\/$/ });

const TYPES = ["Notification", "SubscriptionConfirmation", "UnsubscribeConfirmation"] as const;
type SnsType = (typeof TYPES)[number];

const NOTIFICATION_FIELDS = ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"];
const SUBSCRIPTION_FIELDS = [
  "Message",
  "MessageId",
  "SubscribeURL",
  "Timestamp",
  "Token",
  "TopicArn",
  "Type",
];
/** Fields that must be present (Subject is optional on notifications). */
const REQUIRED = ["Message", "MessageId", "Timestamp", "TopicArn", "Type"];

/** A parsed SNS message: its string fields, by name. */
export type SnsMessage = Readonly<Record<string, string>>;

function malformed(why: string) {
  return hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", why);
}

/**
 * Parses an SNS message body and checks the fields that the signature covers.
 *
 * @throws HookinboxError HOOKINBOX_BODY_INVALID_JSON (not a JSON object),
 *   HOOKINBOX_SIGNATURE_MISSING (no `Signature`), HOOKINBOX_SIGNATURE_MALFORMED (a signed field
 *   missing or not a string, an unknown `Type`, no `SigningCertURL` or `SignatureVersion`).
 * @example
 * ```ts
 * const message = parseSnsMessage(request.body);
 * message.MessageId; // "da41e39f-…"
 * ```
 */
export function parseSnsMessage(body: Uint8Array): SnsMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8Text(body));
  } catch (error) {
    throw hookinboxError("HOOKINBOX_BODY_INVALID_JSON", "SNS signs fields of a JSON body", error);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw hookinboxError("HOOKINBOX_BODY_INVALID_JSON", "an SNS message is a JSON object");
  }
  const signature = field(parsed, "Signature");
  if (signature === undefined || signature === "") {
    throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", "expected Signature in the body");
  }
  const message: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value === "string") message[name] = value;
  }
  const type = field(parsed, "Type");
  if (!TYPES.includes(type as SnsType)) throw malformed("Type is not an SNS message type");
  const required = type === "Notification" ? REQUIRED : [...REQUIRED, "SubscribeURL", "Token"];
  for (const name of [...required, "Signature", "SigningCertURL", "SignatureVersion"]) {
    if (message[name] === undefined) throw malformed(`${name} is missing or not a string`);
  }
  if (field(parsed, "Subject") !== undefined && message.Subject === undefined) {
    throw malformed("Subject is not a string");
  }
  return message;
}

/**
 * The string SNS signs: `Name\nvalue\n` for each signed field present, in SNS's order.
 *
 * @example
 * ```ts
 * snsStringToSign({ Type: "Notification", Message: "hi", … }); // "Message\nhi\nMessageId\n…"
 * ```
 */
export function snsStringToSign(message: SnsMessage): string {
  const names = message.Type === "Notification" ? NOTIFICATION_FIELDS : SUBSCRIPTION_FIELDS;
  let text = "";
  for (const name of names) {
    const value = message[name];
    if (value !== undefined) text += `${name}\n${value}\n`;
  }
  return text;
}

/**
 * Where an SNS message's identity lives: `MessageId`, the message `Type` (`Notification`,
 * `SubscriptionConfirmation`, `UnsubscribeConfirmation`) and the signed `Timestamp`.
 *
 * @example
 * ```ts
 * snsIdentity.id; // "$.MessageId"
 * ```
 */
export const snsIdentity: IdentitySpec = Object.freeze({
  id: "$.MessageId",
  type: "$.Type",
  occurredAt: "$.Timestamp",
});

/**
 * The SNS scheme. Verification, in order:
 * 1. the body (see {@link parseSnsMessage}): not JSON → HOOKINBOX_BODY_INVALID_JSON, no
 *    `Signature` → HOOKINBOX_SIGNATURE_MISSING, a field missing → HOOKINBOX_SIGNATURE_MALFORMED;
 * 2. `SignatureVersion` other than `1` or `2` → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED;
 * 3. `TopicArn` not one of `topicArns` → HOOKINBOX_SENDER_NOT_ALLOWED (nothing is fetched);
 * 4. `SigningCertURL` not HTTPS on an SNS host → HOOKINBOX_KEY_URL_NOT_ALLOWED (nothing is
 *    fetched); the certificate cannot be fetched in time → HOOKINBOX_KEY_UNAVAILABLE (503); the
 *    host has no such certificate, or it is expired → HOOKINBOX_KEY_UNKNOWN;
 * 5. the signature (not canonical base64: matches nothing) → HOOKINBOX_SIGNATURE_MISMATCH;
 * 6. with a finite window: `Timestamp` not a date → HOOKINBOX_TIMESTAMP_MALFORMED, outside →
 *    HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE.
 * Uses no secret (`usesSecrets: false`). `confirmSubscription` fetches `SubscribeURL` when
 * `autoConfirm` is on (failure → HOOKINBOX_SUBSCRIPTION_CONFIRM_FAILED, 503).
 *
 * @example
 * ```ts
 * const scheme = snsScheme({ topicArns: ["arn:aws:sns:eu-west-1:123456789012:orders"] });
 * await scheme.verifier.verify(request, [], Date.now());
 * ```
 */
export function snsScheme(options: SnsOptions): ProviderScheme<AsyncVerifier> {
  const topics = new Set(options.topicArns);
  if (topics.size === 0) throw new Error("an SNS source needs at least one topic ARN");
  const toleranceMs = checkTolerance(options.toleranceMs ?? Number.POSITIVE_INFINITY);
  const certificate = certificateSource([snsCertificateRule], options.keys);
  const fetcher = options.keys?.fetcher ?? httpKeyFetcher;
  const timeoutMs = options.keys?.timeoutMs ?? defaultKeyTimeoutMs;

  const confirm = async (url: string): Promise<void> => {
    try {
      await fetchKeyText(fetcher, { url, method: "GET", timeoutMs }, [snsSubscribeRule]);
    } catch (error) {
      if (isHookinboxError(error, "HOOKINBOX_KEY_URL_NOT_ALLOWED")) throw error;
      throw hookinboxError(
        "HOOKINBOX_SUBSCRIPTION_CONFIRM_FAILED",
        "SNS did not confirm the subscription",
        error,
      );
    }
  };

  return {
    provider: "sns",
    identity: snsIdentity,
    usesSecrets: false,
    confirmSubscription(request: SignedRequest) {
      if (options.autoConfirm !== true) return undefined;
      let message: SnsMessage;
      try {
        message = parseSnsMessage(request.body);
      } catch {
        return undefined;
      }
      if (message.Type !== "SubscriptionConfirmation" || message.SubscribeURL === undefined) {
        return undefined;
      }
      return confirm(message.SubscribeURL);
    },
    verifier: {
      async verify(request, _secrets, nowMs) {
        const message = parseSnsMessage(request.body);
        const version = message.SignatureVersion;
        if (version !== "1" && version !== "2") {
          throw hookinboxError(
            "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
            "expected SignatureVersion 1 or 2",
          );
        }
        if (!topics.has(message.TopicArn ?? "")) {
          throw hookinboxError(
            "HOOKINBOX_SENDER_NOT_ALLOWED",
            "the topic is not in this source's topicArns",
          );
        }
        const key = await certificate(message.SigningCertURL ?? "", nowMs);
        const signature = decodeBase64(message.Signature ?? "");
        const signed = Buffer.from(snsStringToSign(message), "utf8");
        if (
          signature === undefined ||
          !rsaSignatureValid(version === "1" ? "sha1" : "sha256", signed, key, signature)
        ) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MISMATCH");
        }
        if (toleranceMs === Number.POSITIVE_INFINITY) return { secretIndex: null };
        const signedAt = Date.parse(message.Timestamp ?? "");
        if (!/^\d{4}-\d\d-\d\dT/.test(message.Timestamp ?? "") || Number.isNaN(signedAt)) {
          throw hookinboxError("HOOKINBOX_TIMESTAMP_MALFORMED", "expected an ISO 8601 Timestamp");
        }
        checkTimestamp(signedAt, nowMs, toleranceMs);
        return { secretIndex: null, signedAt };
      },
    },
  };
}

/**
 * An Amazon SNS source (AWS-signed messages for the named topics). Returns `{ provider: "sns", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { sns: sns({ topicArns: ["arn:aws:sns:eu-west-1:123456789012:orders"] }) }
 * ```
 */
export const sns = defineProvider({
  name: "sns",
  options: {
    // Verified with AWS's certificates: no secret; the topics are the binding (fail closed).
    ...unsigned,
    topicArns: z
      .array(
        z.string().regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.-]{1,256}$/, {
          message: 'expected a topic ARN like "arn:aws:sns:eu-west-1:123456789012:orders"',
        }),
      )
      .min(1, "an SNS source accepts only the topics it names (fail closed)"),
    autoConfirm: z.boolean().optional(),
    tolerance: duration.optional(),
  },
  identity: snsIdentity,
  docs: "#amazon-sns",
  // Signature headers empty: the signature is in the JSON body.
  headers: {
    signature: [],
    context: ["x-amz-sns-message-type", "x-amz-sns-message-id", "x-amz-sns-topic-arn"],
  },
  scheme: (source, context) =>
    snsScheme({
      topicArns: source.topicArns,
      autoConfirm: source.autoConfirm ?? false,
      ...context.window,
      keys: context.keys,
    }),
});
