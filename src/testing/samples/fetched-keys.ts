// Payloads: each provider's documented example message, trimmed (origins cited). The signatures
// are made with the test key of key-material.ts; see there why a receiver needs `keyFetcher`.
import { createHash, sign } from "node:crypto";
import {
  answeringFetcher,
  compactJws,
  EXAMPLE_RSA_BUNDLE,
  sampleCertificate,
  samplePrivateKey,
  samplePublicJwk,
} from "./key-material.ts";
import { presetSample, stableIso, uuidLike } from "./preset-kit.ts";
import { digits, randomToken, seconds } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

/** The EC P-256 test key Plaid's sample signs with (PKCS#8 DER, base64; test only). */
const EXAMPLE_EC_KEY =
  "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg7ZMJqEo8nKFYqIpJI2XQkaUGB0Y5bhOk9g1KllLAP/ihRANCAAQbm4tC39gnwyFJxs4KWBg4JptJM15unC7pjWdCPX5WUmLv0H/cKLAaeEL+q08LWR5nimj9bsaUyaO/ORLgSrUu";

const SNS_TOPIC = "arn:aws:sns:us-east-1:123456789012:orders";
const SNS_CERT_URL =
  "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-9c6465fa7f48f5cacd23014631ec1136.pem";

/**
 * Amazon SNS: a `Notification` signed with SignatureVersion 2 (RSA-SHA256 over the canonical
 * string of Message, MessageId, Subject, Timestamp, TopicArn, Type), the certificate at
 * `SigningCertURL`. The secret is a PEM private key followed by its certificate.
 *
 * @example
 * ```ts
 * snsSample.sourceOptions?.(url); // { topicArns: ["arn:aws:sns:us-east-1:123456789012:orders"] }
 * ```
 */
export const snsSample: ProviderSample = {
  ...presetSample({
    provider: "sns",
    origin: "docs.aws.amazon.com, SNS HTTP/S notification JSON format",
    defaultType: "order.created",
    unhandledType: "order.archived",
    exampleSecret: EXAMPLE_RSA_BUNDLE,
    traits: { signs: "body", bodyFormat: "json" },
    newId: uuidLike,
    sourceOptions: () => ({ topicArns: [SNS_TOPIC] }),
    headersForRawBody: (input) => ({ "x-amz-sns-message-id": input.id }),
    payload: (input, type) => {
      const fields: Record<string, string> = {
        Message: JSON.stringify({ type, orderId: input.resource ?? "ord_1001" }),
        MessageId: input.id,
        Subject: type,
        Timestamp: stableIso(input.sequence),
        TopicArn: SNS_TOPIC,
        Type: "Notification",
      };
      const canonical = Object.entries(fields)
        .map(([name, value]) => `${name}\n${value}\n`)
        .join("");
      const signature = sign("sha256", Buffer.from(canonical), samplePrivateKey(input.secret));
      return {
        // Timestamp last: a one-byte change at the end of the body lands in a signed field.
        body: {
          Type: "Notification",
          MessageId: input.id,
          TopicArn: SNS_TOPIC,
          Subject: type,
          Message: fields.Message,
          SignatureVersion: "2",
          Signature: signature.toString("base64"),
          SigningCertURL: SNS_CERT_URL,
          UnsubscribeURL: `https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${SNS_TOPIC}:c9135db0`,
          Timestamp: fields.Timestamp,
        },
        eventId: input.id,
        headers: {
          "x-amz-sns-message-type": "Notification",
          "x-amz-sns-message-id": input.id,
          "x-amz-sns-topic-arn": SNS_TOPIC,
        },
      };
    },
    sign: () => ({ "content-type": "text/plain; charset=UTF-8" }),
  }),
  receiverHasNoSecret: true,
  keyFetcher: (secret) =>
    answeringFetcher((r) => (r.url === SNS_CERT_URL ? sampleCertificate(secret) : undefined)),
};

const PAYPAL_WEBHOOK_ID = "8PT597110X687430LKGECATA";
const PAYPAL_CERT_URL =
  "https://api.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77";

/** CRC-32 (IEEE) of the body's UTF-8 bytes, as PayPal signs it: an unsigned decimal. */
function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text)) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * PayPal: `PAYPAL-TRANSMISSION-SIG`, RSA-SHA256 over
 * `{transmission id}|{transmission time}|{webhook id}|{CRC-32 of the body}`, with the certificate
 * at `PAYPAL-CERT-URL`. The secret is a PEM private key followed by its certificate.
 *
 * @example
 * ```ts
 * paypalSample.sourceOptions?.(url); // { webhookIds: ["8PT597110X687430LKGECATA"] }
 * ```
 */
export const paypalSample: ProviderSample = {
  ...presetSample({
    provider: "paypal",
    origin: "developer.paypal.com, webhooks event names: PAYMENT.CAPTURE.COMPLETED sample",
    defaultType: "PAYMENT.CAPTURE.COMPLETED",
    unhandledType: "CUSTOMER.DISPUTE.RESOLVED",
    exampleSecret: EXAMPLE_RSA_BUNDLE,
    traits: { signs: "body", bodyFormat: "json" },
    newId: () =>
      `WH-${randomToken(17, "0123456789ABCDEFGHJKLMNPRSTUVWXY")}-${randomToken(17, "0123456789ABCDEFGHJKLMNPRSTUVWXY")}`,
    sourceOptions: () => ({ webhookIds: [PAYPAL_WEBHOOK_ID] }),
    payload: (input, type) => ({
      body: {
        id: input.id,
        event_version: "1.0",
        create_time: stableIso(input.sequence),
        resource_type: "capture",
        event_type: type,
        summary: "Payment completed for $ 7.47 USD",
        resource: {
          id: input.resource ?? "42311647XV020574X",
          status: "COMPLETED",
          amount: { currency_code: "USD", value: "7.47" },
        },
      },
      eventId: input.id,
    }),
    sign: (body, { secret, nowMs, id }) => {
      const transmissionId = `${digits(id, 8)}-${digits(`${id}:${nowMs}`, 4)}-11ef-a0b4-4b4b8b2f7e38`;
      const time = new Date(seconds(nowMs) * 1000).toISOString().replace(".000Z", "Z");
      const signed = `${transmissionId}|${time}|${PAYPAL_WEBHOOK_ID}|${crc32(body)}`;
      return {
        "paypal-transmission-id": transmissionId,
        "paypal-transmission-time": time,
        "paypal-transmission-sig": sign(
          "sha256",
          Buffer.from(signed),
          samplePrivateKey(secret),
        ).toString("base64"),
        "paypal-cert-url": PAYPAL_CERT_URL,
        "paypal-auth-algo": "SHA256withRSA",
      };
    },
  }),
  receiverHasNoSecret: true,
  keyFetcher: (secret) =>
    answeringFetcher((r) => (r.url === PAYPAL_CERT_URL ? sampleCertificate(secret) : undefined)),
};

const GOOGLE_KID = "hookinbox-sample-rs256";
const PUSH_ACCOUNT = "push-auth@hookinbox-sample.iam.gserviceaccount.com";

/**
 * Google Cloud Pub/Sub push: the push envelope, with `Authorization: Bearer <OIDC token>` signed
 * RS256 by the test key (`aud` = the push URL, `email` = the push service account). The token
 * does not cover the body.
 *
 * @example
 * ```ts
 * pubsubSample.sourceOptions?.(url); // { audience: url, serviceAccountEmails: ["push-auth@…"] }
 * ```
 */
export const pubsubSample: ProviderSample = {
  ...presetSample({
    provider: "pubsub",
    origin: "cloud.google.com/pubsub/docs/push, push request body and authentication",
    defaultType: "order.created",
    unhandledType: "order.archived",
    exampleSecret: EXAMPLE_RSA_BUNDLE,
    traits: { signs: "nothing", bodyFormat: "json" },
    newId: () => digits(String(Math.random()), 16),
    sourceOptions: (url) => ({ audience: url, serviceAccountEmails: [PUSH_ACCOUNT] }),
    payload: (input, type) => ({
      body: {
        message: {
          attributes: { eventType: type },
          data: Buffer.from(JSON.stringify({ orderId: input.resource ?? "ord_1001" })).toString(
            "base64",
          ),
          messageId: input.id,
          publishTime: stableIso(input.sequence),
        },
        subscription: "projects/hookinbox-sample/subscriptions/orders-push",
      },
      eventId: input.id,
    }),
    sign: (_body, { secret, url, nowMs }) => {
      const iat = seconds(nowMs);
      const claims = {
        aud: url,
        azp: "113774264463038321964",
        email: PUSH_ACCOUNT,
        email_verified: true,
        exp: iat + 3600,
        iat,
        iss: "https://accounts.google.com",
        sub: "113774264463038321964",
      };
      const key = samplePrivateKey(secret);
      const token = compactJws({ alg: "RS256", kid: GOOGLE_KID, typ: "JWT" }, claims, (data) =>
        sign("sha256", data, key),
      );
      return { authorization: `Bearer ${token}` };
    },
  }),
  receiverHasNoSecret: true,
  keyFetcher: (secret) =>
    answeringFetcher((r) =>
      r.url === "https://www.googleapis.com/oauth2/v3/certs"
        ? JSON.stringify({ keys: [samplePublicJwk(secret, GOOGLE_KID, "RS256")] })
        : undefined,
    ),
};

const PLAID_KID = "6c5516e1-92dc-479e-a8ff-5a51992e0001";

/**
 * Plaid: `Plaid-Verification`, an ES256 JWT over `{ iat, request_body_sha256 }` whose key
 * Plaid's API returns for its `kid`. The secret is an EC P-256 private key. Plaid sends no event
 * id: the key carries the token's `iat`, so a redelivery signed later is a new event.
 *
 * @example
 * ```ts
 * plaidSample.sourceOptions?.(url); // { clientId: "hookinbox-sample-client" }
 * ```
 */
export const plaidSample: ProviderSample = {
  ...presetSample({
    provider: "plaid",
    origin: "plaid.com/docs, Transactions webhooks: SYNC_UPDATES_AVAILABLE",
    defaultType: "TRANSACTIONS.SYNC_UPDATES_AVAILABLE",
    unhandledType: "ITEM.WEBHOOK_UPDATE_ACKNOWLEDGED",
    exampleSecret: EXAMPLE_EC_KEY,
    traits: {
      signs: "body",
      bodyFormat: "json",
      timestampWindowMs: 300_000,
      dedup: "per-notification",
    },
    newId: () => `item_${randomToken(32)}`,
    sourceOptions: () => ({ clientId: "hookinbox-sample-client" }),
    payload: (input, type) => {
      const [webhookType = "TRANSACTIONS", code = "SYNC_UPDATES_AVAILABLE"] = type.split(".");
      const itemId = input.resource ?? input.id;
      return {
        body: {
          environment: "production",
          webhook_type: webhookType,
          webhook_code: code,
          item_id: itemId,
          initial_update_complete: true,
          historical_update_complete: true,
        },
        eventId: `${webhookType}:${code}:${itemId}:${seconds(input.nowMs)}`,
      };
    },
    sign: (body, { secret, nowMs }) => {
      const claims = {
        iat: seconds(nowMs),
        request_body_sha256: createHash("sha256").update(body).digest("hex"),
      };
      const key = samplePrivateKey(secret);
      const token = compactJws({ alg: "ES256", kid: PLAID_KID, typ: "JWT" }, claims, (data) =>
        sign("sha256", data, { key, dsaEncoding: "ieee-p1363" }),
      );
      return { "plaid-verification": token };
    },
  }),
  receiverSecret: () => "hookinbox-sample-plaid-api-secret",
  keyFetcher: (secret) =>
    answeringFetcher((r) =>
      r.url === "https://production.plaid.com/webhook_verification_key/get"
        ? JSON.stringify({
            key: {
              ...samplePublicJwk(secret, PLAID_KID, "ES256"),
              created_at: 1_700_000_000,
              expired_at: null,
            },
          })
        : undefined,
    ),
};
