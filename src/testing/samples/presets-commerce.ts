// Payloads: each provider's documented example event, trimmed (the origin of each is cited).
import { createHash } from "node:crypto";
import { bodyHmacSigner, presetSample, stableIso, uuidFrom, uuidLike } from "./preset-kit.ts";
import { digits, mac, randomToken, seconds } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

const json = { signs: "body", bodyFormat: "json" } as const;

/**
 * Typeform: `Typeform-Signature: sha256=<base64 HMAC-SHA256 of the body>`; a form response.
 *
 * @example
 * ```ts
 * typeformSample.defaultType; // "form_response"
 * ```
 */
export const typeformSample: ProviderSample = presetSample({
  provider: "typeform",
  origin: "typeform.com developers, webhooks example payload (form_response)",
  defaultType: "form_response",
  unhandledType: "form_response_partial",
  exampleSecret: "typeform-example-secret",
  traits: json,
  newId: () => `01${randomToken(24, "0123456789ABCDEFGHJKMNPQRSTVWXYZ")}`,
  payload: (input, type) => ({
    body: {
      event_id: input.id,
      event_type: type,
      form_response: {
        form_id: input.resource ?? "lT4Z3j",
        token: "a3a12ec67a1365927098a606107fac15",
        submitted_at: stableIso(input.sequence),
        definition: { id: "lT4Z3j", title: "Webhooks example" },
        answers: [
          { type: "text", text: "Lorem ipsum", field: { id: "DlXFaesGBpoF", type: "long_text" } },
        ],
      },
    },
    eventId: input.id,
  }),
  sign: bodyHmacSigner("typeform-signature", "sha256", "base64", "sha256="),
});

/**
 * Calendly: `Calendly-Webhook-Signature: t=<s>,v1=<hex HMAC-SHA256 of "{t}.{body}">`; the dedup
 * key is `<event>:<payload.uri>` (Calendly sends no event id), the invitee URI carries the id.
 *
 * @example
 * ```ts
 * calendlySample.traits("s").timestampWindowMs; // 180000
 * ```
 */
export const calendlySample: ProviderSample = presetSample({
  provider: "calendly",
  origin: "developer.calendly.com, webhook payload: invitee.created",
  defaultType: "invitee.created",
  unhandledType: "routing_form_submission.created",
  exampleSecret: "calendly-example-signing-key",
  traits: { ...json, timestampWindowMs: 180_000 },
  newId: uuidLike,
  payload: (input, type) => {
    const event = `https://api.calendly.com/scheduled_events/${input.resource ?? uuidFrom("event")}`;
    const uri = `${event}/invitees/${input.id}`;
    return {
      body: {
        created_at: stableIso(input.sequence),
        created_by: "https://api.calendly.com/users/AAAAAAAAAAAAAAAA",
        event: type,
        payload: {
          uri,
          event,
          email: "test@example.com",
          name: "John Doe",
          status: "active",
          timezone: "America/New_York",
        },
      },
      eventId: `${type}:${uri}`,
    };
  },
  sign: (body, { secret, nowMs }) => {
    const t = seconds(nowMs);
    return {
      "calendly-webhook-signature": `t=${t},v1=${mac("sha256", secret, `${t}.${body}`, "hex")}`,
    };
  },
});

/**
 * Lemon Squeezy: `X-Signature`, hex HMAC-SHA256 of the body. No event id: the key is
 * `<meta.event_name>:<data.type>/<data.id>:<updated_at>`.
 *
 * @example
 * ```ts
 * lemonSqueezySample.defaultType; // "order_created"
 * ```
 */
export const lemonSqueezySample: ProviderSample = presetSample({
  provider: "lemonsqueezy",
  origin: "docs.lemonsqueezy.com, webhooks: order_created example",
  defaultType: "order_created",
  unhandledType: "affiliate_activated",
  exampleSecret: "lemonsqueezy-example-signing-secret",
  traits: json,
  newId: () => digits(String(Math.random()), 7),
  payload: (input, type) => {
    const id = input.resource ?? input.id;
    const updated = stableIso(input.sequence).replace(".000Z", ".000000Z");
    return {
      body: {
        meta: { event_name: type, custom_data: { customer_id: 25 } },
        data: {
          type: "orders",
          id,
          attributes: {
            store_id: 1,
            identifier: uuidFrom(id),
            order_number: 1,
            status: "paid",
            total: 999,
            created_at: "2021-08-17T09:45:53.000000Z",
            updated_at: updated,
          },
        },
      },
      eventId: `${type}:orders/${id}:${updated}`,
      version: String(Date.parse(updated)),
    };
  },
  sign: bodyHmacSigner("x-signature", "sha256", "hex"),
});

/**
 * Razorpay: `X-Razorpay-Signature` (hex HMAC-SHA256 of the body), `x-razorpay-event-id` as id.
 *
 * @example
 * ```ts
 * razorpaySample.defaultType; // "payment.captured"
 * ```
 */
export const razorpaySample: ProviderSample = presetSample({
  provider: "razorpay",
  origin: "razorpay.com docs, webhooks payloads: payment.captured",
  defaultType: "payment.captured",
  unhandledType: "payment.dispute.under_review",
  exampleSecret: "razorpay-example-webhook-secret",
  traits: json,
  newId: () => `${randomToken(14)}`,
  headersForRawBody: (input) => ({ "x-razorpay-event-id": input.id }),
  payload: (input, type) => ({
    body: {
      entity: "event",
      account_id: "acc_BFQ7uQEaa7j2z7",
      event: type,
      contains: ["payment"],
      payload: {
        payment: {
          entity: {
            id: input.resource ?? "pay_DESlfW9H8K9uqM",
            entity: "payment",
            amount: 100,
            currency: "INR",
            status: "captured",
            method: "netbanking",
          },
        },
      },
      created_at: input.sequence ?? 1_764_504_000,
    },
    eventId: input.id,
    headers: { "x-razorpay-event-id": input.id },
  }),
  sign: bodyHmacSigner("x-razorpay-signature", "sha256", "hex"),
});

/**
 * Coinbase Commerce: `X-CC-Webhook-Signature`, hex HMAC-SHA256 of the body; a charge event.
 *
 * @example
 * ```ts
 * coinbaseSample.defaultType; // "charge:confirmed"
 * ```
 */
export const coinbaseSample: ProviderSample = presetSample({
  provider: "coinbase",
  origin: "docs.cdp.coinbase.com, Commerce webhooks: charge:confirmed example",
  defaultType: "charge:confirmed",
  unhandledType: "charge:delayed",
  exampleSecret: "coinbase-commerce-example-shared-secret",
  traits: json,
  newId: uuidLike,
  payload: (input, type) => ({
    body: {
      id: 1,
      scheduled_for: stableIso(input.sequence),
      event: {
        id: input.id,
        resource: "event",
        type,
        api_version: "2018-03-22",
        created_at: stableIso(input.sequence),
        data: {
          code: input.resource ?? "66BEOV2A",
          name: "The Sovereign Individual",
          pricing: { local: { amount: "100.00", currency: "USD" } },
        },
      },
    },
    eventId: input.id,
  }),
  sign: bodyHmacSigner("x-cc-webhook-signature", "sha256", "hex"),
});

/**
 * Postmark: basic-auth credentials from the webhook URL (the secret is `user:password`); a
 * Delivery webhook. The key is `<RecordType>:<MessageID>:<DeliveredAt>`.
 *
 * @example
 * ```ts
 * postmarkSample.exampleSecret; // "postmark:example-password"
 * ```
 */
export const postmarkSample: ProviderSample = presetSample({
  provider: "postmark",
  origin: "postmarkapp.com developer docs, delivery webhook example",
  defaultType: "Delivery",
  unhandledType: "SubscriptionChange",
  exampleSecret: "postmark:example-password",
  traits: { signs: "nothing", bodyFormat: "json" },
  newId: uuidLike,
  payload: (input, type) => {
    const at = stableIso(input.sequence);
    return {
      body: {
        RecordType: type,
        ServerID: 23,
        MessageStream: "outbound",
        MessageID: input.id,
        Recipient: "john@example.com",
        Tag: "welcome-email",
        DeliveredAt: at,
        ChangedAt: at,
        Details: "Test delivery webhook details",
        Metadata: { a_key: input.resource ?? "a_value" },
      },
      eventId: `${type}:${input.id}:${at}`,
    };
  },
  sign: (_body, { secret }) => ({
    authorization: `Basic ${Buffer.from(secret).toString("base64")}`,
  }),
});

/**
 * Mailgun: the signature object inside the body (hex HMAC-SHA256 of `{timestamp}{token}` with
 * the webhook signing key), `event-data.id` as id. The token follows the id, so a redelivery
 * carries the same token for the same event.
 *
 * @example
 * ```ts
 * mailgunSample.traits("s").signs; // "fields"
 * ```
 */
export const mailgunSample: ProviderSample = presetSample({
  provider: "mailgun",
  origin: "documentation.mailgun.com, securing webhooks and the delivered event",
  defaultType: "delivered",
  unhandledType: "list_member_uploaded",
  exampleSecret: "key-7e55a8c3b2c4f1e0d9a8b7c6d5e4f3a2",
  traits: { signs: "fields", bodyFormat: "json", timestampWindowMs: 300_000 },
  newId: () => randomToken(22),
  payload: (input, type) => {
    const timestamp = String(seconds(input.nowMs));
    const token = createHash("sha256").update(input.id).digest("hex").slice(0, 50);
    return {
      body: {
        "event-data": {
          id: input.id,
          timestamp: input.sequence ?? 1_764_504_000.123456,
          "log-level": "info",
          event: type,
          recipient: "alice@example.com",
          message: {
            headers: {
              "message-id": `${input.resource ?? "20261130120000.1.5E0E4C5A1B2C3D4"}@mg.example.com`,
              subject: "Your receipt",
            },
          },
        },
        // Last, so a one-byte change at the end of the body lands in a signed field.
        signature: {
          token,
          timestamp,
          signature: mac("sha256", input.secret, `${timestamp}${token}`, "hex"),
        },
      },
      eventId: input.id,
    };
  },
  sign: () => ({}),
});

/**
 * Mollie next-gen webhooks: `X-Mollie-Signature: sha256=<hex HMAC-SHA256 of the body>`; the
 * "simple" payload of a `payment-link.paid` event. (Classic `id=tr_…` posts carry no
 * signature and no event id: see docs/providers.md.)
 *
 * @example
 * ```ts
 * mollieSample.defaultType; // "payment-link.paid"
 * ```
 */
export const mollieSample: ProviderSample = presetSample({
  provider: "mollie",
  origin: "docs.mollie.com, next-gen webhooks: payment-link.paid simple payload",
  defaultType: "payment-link.paid",
  unhandledType: "sales-invoice.canceled",
  exampleSecret: "Vt3sGNDxJEfB7dkaxh2p2Cyq6w8ZRWQ6",
  traits: json,
  newId: () => `event_${randomToken(21)}`,
  payload: (input, type) => {
    const entity = input.resource ?? "pl_qng5gbbv8NAZ5gpM5ZYgx";
    return {
      body: {
        resource: "event",
        id: input.id,
        type,
        entityId: entity,
        createdAt: stableIso(input.sequence),
        _links: {
          self: {
            href: `https://api.mollie.com/v2/events/${input.id}`,
            type: "application/hal+json",
          },
          "payment-link": { href: `/v2/payment-links/${entity}`, type: "application/hal+json" },
        },
      },
      eventId: input.id,
    };
  },
  sign: (body, { secret }) => ({
    "x-mollie-signature": `sha256=${mac("sha256", secret, body, "hex")}`,
  }),
});
