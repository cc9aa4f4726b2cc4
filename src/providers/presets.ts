/**
 * Presets: providers whose scheme is a variant of one the catalogue already verifies. Each is
 * ONE entry here — the generic HMAC options (header, prefix, encoding, signed content, timestamp
 * and window) or Standard Webhooks, plus the provider's identity — and no verification code of
 * its own. The config schema, `schemeFor` and the `define` factories derive from this table.
 *
 * Where a provider's documentation left a detail open, the entry says "unconfirmed" and the
 * detail can be changed per source (`identity`, `tolerance`).
 */

import { signedWithTolerance } from "../config/source-fields.ts";
import { field, jsonOrUndefined, path, scalarText } from "./body.ts";
import {
  defineProvider,
  type ProviderHeaders,
  type SourceHelper,
  type SourceSchema,
} from "./definition.ts";
import { type HmacOptions, hmacScheme } from "./hmac.ts";
import { readHeader } from "./match.ts";
import { standardWebhooksId, standardWebhooksScheme } from "./standard-webhooks.ts";
import { type TokenLocation, tokenVerifier } from "./token.ts";
import type { IdentityContext, IdentitySpec, ProviderScheme, Verifier } from "./types.ts";

/**
 * One preset: how it verifies (generic HMAC options or Standard Webhooks), its default window,
 * and where its identity lives.
 *
 * @example
 * ```ts
 * const preset: Preset = {
 *   verify: { kind: "hmac", options: { header: "x-signature", algorithm: "sha256", encoding: "hex",
 *     secretEncoding: "utf8", signedContent: "{body}", timestampUnit: "s" } },
 *   identity: { id: "$.id", type: "$.type" },
 *   docs: "#example",
 *   headers: { signature: ["x-signature"] },
 * };
 * ```
 */
export interface Preset {
  readonly verify:
    | { readonly kind: "hmac"; readonly options: Omit<HmacOptions, "toleranceMs"> }
    | { readonly kind: "standard-webhooks" }
    | { readonly kind: "token"; readonly where: TokenLocation };
  /** The window when the source sets no `tolerance` (only used where a timestamp is signed). */
  readonly toleranceMs?: number;
  readonly identity: IdentitySpec;
  /** Its section in docs/providers.md. */
  readonly docs: `#${string}`;
  /** The request headers it sends that hookinbox forwards to destinations. */
  readonly headers: ProviderHeaders;
}

/** HMAC-SHA256 of the raw body, hex, keyed with the secret as UTF-8: the most common variant. */
function hexOptions(header: string): Omit<HmacOptions, "toleranceMs"> {
  return {
    header,
    algorithm: "sha256",
    encoding: "hex",
    secretEncoding: "utf8",
    signedContent: "{body}",
    timestampUnit: "s",
  };
}

/**
 * A verifier of hex HMAC-SHA256 over the raw body in `header` (with an optional prefix such as
 * `sha256=`), keyed with the secret as UTF-8: what Meta, Dropbox and Asana sign their events with.
 *
 * @example
 * ```ts
 * const verifier = hexBodyVerifier("x-hub-signature-256", "sha256=");
 * ```
 */
export function hexBodyVerifier(header: string, prefix?: string): Verifier {
  return hmacScheme({
    ...hexOptions(header),
    ...(prefix === undefined ? {} : { prefix }),
    toleranceMs: 0,
  }).verifier;
}

const hexBody = (header: string, prefix?: string): Preset["verify"] => ({
  kind: "hmac",
  options: { ...hexOptions(header), ...(prefix === undefined ? {} : { prefix }) },
});

/** Joins parts with ":" when every one is present, else `undefined` (no partial keys). */
function joined(...parts: readonly (string | undefined)[]): string | undefined {
  return parts.every((p) => p !== undefined) ? parts.join(":") : undefined;
}

/**
 * The Sentry event type: `<Sentry-Hook-Resource>.<action>` (`issue.created`), or the resource
 * alone when the body has no `action`.
 *
 * @example
 * ```ts
 * sentryEventType(ctx); // "issue.resolved"
 * ```
 */
export function sentryEventType(context: IdentityContext): string | undefined {
  const resource = readHeader(context.headers, "sentry-hook-resource");
  const action = scalarText(field(jsonOrUndefined(context), "action"));
  if (resource === undefined) return action;
  return action === undefined ? resource : `${resource}.${action}`;
}

/**
 * The Sentry ordering key: the issue id for issue and comment events, else the installation.
 *
 * @example
 * ```ts
 * sentryOrderingKey(ctx); // "issue:1234"
 * ```
 */
export function sentryOrderingKey(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  const issue =
    scalarText(path(body, "data", "issue", "id")) ??
    scalarText(path(body, "data", "issue_id")) ??
    scalarText(path(body, "data", "event", "issue_id"));
  if (issue !== undefined) return `issue:${issue}`;
  const installation = scalarText(path(body, "installation", "uuid"));
  return installation === undefined ? undefined : `installation:${installation}`;
}

/**
 * The Lemon Squeezy resource: `<data.type>/<data.id>` (`orders/1`).
 *
 * @example
 * ```ts
 * lemonSqueezyResource(ctx); // "subscriptions/42"
 * ```
 */
export function lemonSqueezyResource(context: IdentityContext): string | undefined {
  const data = field(jsonOrUndefined(context), "data");
  const type = scalarText(field(data, "type"));
  const id = scalarText(field(data, "id"));
  return type === undefined || id === undefined ? undefined : `${type}/${id}`;
}

/**
 * The Lemon Squeezy dedup key. Lemon Squeezy sends no event id, so the key is
 * `<meta.event_name>:<data.type>/<data.id>:<data.attributes.updated_at>`: one state of one
 * resource announced by one event name (a retry repeats all three).
 *
 * @example
 * ```ts
 * lemonSqueezyEventKey(ctx); // "order_created:orders/1:2021-08-17T09:45:53.000000Z"
 * ```
 */
export function lemonSqueezyEventKey(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  return joined(
    scalarText(path(body, "meta", "event_name")),
    lemonSqueezyResource(context),
    scalarText(path(body, "data", "attributes", "updated_at")),
  );
}

/**
 * The Razorpay ordering key: the entity the event is about, the first one the body's `contains`
 * names (`payload.payment.entity.id` → `pay_…`).
 *
 * @example
 * ```ts
 * razorpayOrderingKey(ctx); // "pay_DESlfW9H8K9uqM"
 * ```
 */
export function razorpayOrderingKey(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  const contains = field(body, "contains");
  const first = Array.isArray(contains) ? scalarText(contains[0]) : undefined;
  if (first === undefined) return undefined;
  return scalarText(path(body, "payload", first, "entity", "id"));
}

/**
 * The Calendly dedup key: `<event>:<payload.uri>` (`invitee.created:https://api.calendly.com/…`).
 * Calendly sends no event id; an invitee (or routing-form submission) URI names the resource and
 * the event name what happened to it, and neither changes on a retry.
 *
 * @example
 * ```ts
 * calendlyEventKey(ctx); // "invitee.canceled:https://api.calendly.com/scheduled_events/…/invitees/…"
 * ```
 */
export function calendlyEventKey(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  return joined(scalarText(field(body, "event")), scalarText(path(body, "payload", "uri")));
}

/**
 * The Bitbucket delivery id: `X-Request-UUID` (Cloud), else `X-Request-Id` (Data Center).
 *
 * @example
 * ```ts
 * bitbucketDeliveryId(ctx); // "afe3b5c8-…"
 * ```
 */
export function bitbucketDeliveryId(context: IdentityContext): string | undefined {
  return (
    readHeader(context.headers, "x-request-uuid") ?? readHeader(context.headers, "x-request-id")
  );
}

/**
 * The Zendesk dedup key: the event's `id` (event-subscribed webhooks), else the
 * `X-Zendesk-Webhook-Invocation-Id` header (trigger and automation webhooks, whose body is
 * the author's own template).
 *
 * @example
 * ```ts
 * zendeskEventId(ctx); // "01FJ1Z…"
 * ```
 */
export function zendeskEventId(context: IdentityContext): string | undefined {
  return (
    scalarText(field(jsonOrUndefined(context), "id")) ??
    readHeader(context.headers, "x-zendesk-webhook-invocation-id")
  );
}

/**
 * The Resend ordering key: the email (`data.email_id`), else the contact or domain (`data.id`).
 *
 * @example
 * ```ts
 * resendOrderingKey(ctx); // "56761188-7520-42d8-8898-ff6fc54ce618"
 * ```
 */
export function resendOrderingKey(context: IdentityContext): string | undefined {
  const data = field(jsonOrUndefined(context), "data");
  return scalarText(field(data, "email_id")) ?? scalarText(field(data, "id"));
}

/**
 * The Telegram update type: the one field of an Update besides `update_id` (`message`,
 * `edited_message`, `callback_query`, …).
 *
 * @example
 * ```ts
 * telegramUpdateType(ctx); // "message"
 * ```
 */
export function telegramUpdateType(context: IdentityContext): string | undefined {
  const update = jsonOrUndefined(context);
  if (typeof update !== "object" || update === null) return undefined;
  return Object.keys(update).find((key) => key !== "update_id");
}

/**
 * The Telegram ordering key: the chat the update belongs to (`<kind>.chat.id`, or a callback
 * query's message chat), else the user it comes from.
 *
 * @example
 * ```ts
 * telegramChat(ctx); // "1111111"
 * ```
 */
export function telegramChat(context: IdentityContext): string | undefined {
  const kind = telegramUpdateType(context);
  if (kind === undefined) return undefined;
  const inner = field(jsonOrUndefined(context), kind);
  return (
    scalarText(path(inner, "chat", "id")) ??
    scalarText(path(inner, "message", "chat", "id")) ??
    scalarText(path(inner, "from", "id"))
  );
}

/**
 * The Postmark dedup key. Postmark sends no event id: `<RecordType>:<ID or MessageID>:<time>`,
 * where the time is the record's own (`DeliveredAt`, `BouncedAt`, `ReceivedAt` of an open or
 * click, `ChangedAt`), so two opens of one message stay two events and a retry stays one.
 *
 * @example
 * ```ts
 * postmarkEventKey(ctx); // "Delivery:883953f4-6105-42a2-a16a-77a8eac79483:2019-11-05T16:33:54.9070259Z"
 * ```
 */
export function postmarkEventKey(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  const time = ["DeliveredAt", "BouncedAt", "ReceivedAt", "ChangedAt"]
    .map((name) => scalarText(field(body, name)))
    .find((value) => value !== undefined);
  return joined(
    scalarText(field(body, "RecordType")),
    scalarText(field(body, "ID")) ?? scalarText(field(body, "MessageID")),
    time,
  );
}

/**
 * Every preset, by provider name. Identity paths read the provider's documented payloads.
 *
 * @example
 * ```ts
 * presets.typeform.identity.id; // "$.event_id"
 * ```
 */
export const presets = {
  /** Clerk sends through Svix: `svix-*` headers, `whsec_` secrets. */
  clerk: {
    docs: "#clerk",
    headers: { signature: ["svix-id", "svix-timestamp", "svix-signature"] },
    verify: { kind: "standard-webhooks" },
    identity: Object.freeze({
      id: standardWebhooksId,
      type: "$.type",
      occurredAt: "$.timestamp",
      orderingKey: "$.data.id",
    }),
  },
  /** Resend sends through Svix: `svix-*` headers, `whsec_` secrets. */
  resend: {
    docs: "#resend",
    headers: { signature: ["svix-id", "svix-timestamp", "svix-signature"] },
    verify: { kind: "standard-webhooks" },
    identity: Object.freeze({
      id: standardWebhooksId,
      type: "$.type",
      occurredAt: "$.created_at",
      orderingKey: resendOrderingKey,
    }),
  },
  /** `WorkOS-Signature: t=<ms>, v1=<hex>` over `{t}.{body}`; the SDK allows 180 s. */
  workos: {
    docs: "#workos",
    headers: { signature: ["workos-signature"] },
    verify: {
      kind: "hmac",
      options: {
        header: "workos-signature",
        prefix: "v1=",
        algorithm: "sha256",
        encoding: "hex",
        secretEncoding: "utf8",
        signedContent: "{timestamp}.{body}",
        timestampTag: "t=",
        timestampUnit: "ms",
      },
    },
    toleranceMs: 180_000,
    identity: Object.freeze({
      id: "$.id",
      type: "$.event",
      occurredAt: "$.created_at",
      orderingKey: "$.data.id",
    }),
  },
  /** `x-vercel-signature`: hex HMAC-SHA1 of the body with the webhook (or integration) secret. */
  vercel: {
    docs: "#vercel",
    headers: { signature: ["x-vercel-signature"] },
    verify: { kind: "hmac", options: { ...hexOptions("x-vercel-signature"), algorithm: "sha1" } },
    identity: Object.freeze({
      id: "$.id",
      type: "$.type",
      occurredAt: "$.createdAt",
      orderingKey: "$.payload.deployment.id",
    }),
  },
  /** `Sentry-Hook-Signature`: hex HMAC-SHA256 of the body with the integration's client secret. */
  sentry: {
    docs: "#sentry",
    headers: {
      signature: ["sentry-hook-signature"],
      context: ["request-id", "sentry-hook-resource", "sentry-hook-timestamp"],
    },
    verify: hexBody("sentry-hook-signature"),
    identity: Object.freeze({
      id: "header:request-id",
      type: sentryEventType,
      occurredAt: "header:sentry-hook-timestamp",
      orderingKey: sentryOrderingKey,
    }),
  },
  /** Bitbucket Cloud and Data Center: `X-Hub-Signature: sha256=<hex>` over the body. */
  bitbucket: {
    docs: "#bitbucket",
    headers: {
      signature: ["x-hub-signature"],
      context: ["x-request-uuid", "x-event-key", "x-hook-uuid"],
    },
    verify: hexBody("x-hub-signature", "sha256="),
    identity: Object.freeze({
      id: bitbucketDeliveryId,
      type: "header:x-event-key",
      orderingKey: "$.repository.full_name",
    }),
  },
  /** Jira Cloud (Atlassian) webhooks with a secret: `X-Hub-Signature: sha256=<hex>`. */
  jira: {
    docs: "#jira-atlassian",
    headers: {
      signature: ["x-hub-signature"],
      context: ["x-atlassian-webhook-identifier", "x-atlassian-webhook-retry"],
    },
    verify: hexBody("x-hub-signature", "sha256="),
    identity: Object.freeze({
      id: "header:x-atlassian-webhook-identifier",
      type: "$.webhookEvent",
      occurredAt: "$.timestamp",
      orderingKey: "$.issue.key",
    }),
  },
  /** `Typeform-Signature: sha256=<base64>` over the body. */
  typeform: {
    docs: "#typeform",
    headers: { signature: ["typeform-signature"] },
    verify: {
      kind: "hmac",
      options: { ...hexOptions("typeform-signature"), prefix: "sha256=", encoding: "base64" },
    },
    identity: Object.freeze({
      id: "$.event_id",
      type: "$.event_type",
      occurredAt: "$.form_response.submitted_at",
      orderingKey: "$.form_response.form_id",
    }),
  },
  /** `Calendly-Webhook-Signature: t=<s>,v1=<hex>` over `{t}.{body}`; Calendly's example allows 3 min. */
  calendly: {
    docs: "#calendly",
    headers: { signature: ["calendly-webhook-signature"] },
    verify: {
      kind: "hmac",
      options: {
        ...hexOptions("calendly-webhook-signature"),
        prefix: "v1=",
        signedContent: "{timestamp}.{body}",
        timestampTag: "t=",
      },
    },
    toleranceMs: 180_000,
    identity: Object.freeze({
      id: calendlyEventKey,
      type: "$.event",
      occurredAt: "$.created_at",
      orderingKey: "$.payload.event",
    }),
  },
  /** `X-Signature`: hex HMAC-SHA256 of the body with the webhook's signing secret. */
  lemonsqueezy: {
    docs: "#lemon-squeezy",
    headers: { signature: ["x-signature"], context: ["x-event-name"] },
    verify: hexBody("x-signature"),
    identity: Object.freeze({
      id: lemonSqueezyEventKey,
      type: "$.meta.event_name",
      occurredAt: "$.data.attributes.updated_at",
      orderingKey: lemonSqueezyResource,
      version: "$.data.attributes.updated_at",
    }),
  },
  /** `X-Razorpay-Signature`: hex HMAC-SHA256 of the body; `x-razorpay-event-id` is the id. */
  razorpay: {
    docs: "#razorpay",
    headers: { signature: ["x-razorpay-signature"], context: ["x-razorpay-event-id"] },
    verify: hexBody("x-razorpay-signature"),
    identity: Object.freeze({
      id: "header:x-razorpay-event-id",
      type: "$.event",
      occurredAt: "$.created_at",
      orderingKey: razorpayOrderingKey,
    }),
  },
  /** Coinbase Commerce: `X-CC-Webhook-Signature`, hex HMAC-SHA256 of the body. */
  coinbase: {
    docs: "#coinbase-commerce",
    headers: { signature: ["x-cc-webhook-signature"] },
    verify: hexBody("x-cc-webhook-signature"),
    identity: Object.freeze({
      id: "$.event.id",
      type: "$.event.type",
      occurredAt: "$.event.created_at",
      orderingKey: "$.event.data.code",
    }),
  },
  /**
   * Zendesk: `X-Zendesk-Webhook-Signature`, base64 HMAC-SHA256 of
   * `{X-Zendesk-Webhook-Signature-Timestamp}{body}`; the timestamp is RFC 3339.
   */
  zendesk: {
    docs: "#zendesk",
    headers: {
      signature: ["x-zendesk-webhook-signature", "x-zendesk-webhook-signature-timestamp"],
      context: ["x-zendesk-webhook-id", "x-zendesk-webhook-invocation-id"],
    },
    verify: {
      kind: "hmac",
      options: {
        ...hexOptions("x-zendesk-webhook-signature"),
        encoding: "base64",
        signedContent: "{timestamp}{body}",
        timestampHeader: "x-zendesk-webhook-signature-timestamp",
        timestampUnit: "rfc3339",
      },
    },
    toleranceMs: 300_000,
    identity: Object.freeze({
      id: zendeskEventId,
      type: "$.type",
      occurredAt: "$.time",
      orderingKey: "$.subject",
    }),
  },
  /** Telegram Bot API: `setWebhook`'s `secret_token` comes back in a header, unsigned. */
  telegram: {
    docs: "#telegram-bot-api",
    headers: { signature: ["x-telegram-bot-api-secret-token"] },
    verify: { kind: "token", where: { kind: "header", name: "x-telegram-bot-api-secret-token" } },
    identity: Object.freeze({
      id: "$.update_id",
      type: telegramUpdateType,
      orderingKey: telegramChat,
    }),
  },
  /** Postmark: basic-auth credentials in the webhook URL (`https://user:password@host/…`). */
  postmark: {
    docs: "#postmark",
    headers: { signature: ["authorization"] },
    verify: { kind: "token", where: { kind: "basic" } },
    identity: Object.freeze({
      id: postmarkEventKey,
      type: "$.RecordType",
      orderingKey: "$.MessageID",
    }),
  },
} as const satisfies Record<string, Preset>;

/** A provider name that is a preset. */
export type PresetName = keyof typeof presets;

/** Every preset's provider name, in catalogue order. */
export const presetNames = Object.keys(presets) as PresetName[];

/**
 * True when `provider` names a preset.
 *
 * @example
 * ```ts
 * isPreset("vercel"); // true
 * ```
 */
export function isPreset(provider: string): provider is PresetName {
  return Object.hasOwn(presets, provider);
}

/**
 * A preset's scheme: the generic machinery it names, with the provider's name and identity.
 * `toleranceMs` overrides the preset's window (schemes that sign no timestamp ignore it).
 *
 * @example
 * ```ts
 * presetScheme("typeform").provider; // "typeform"
 * presetScheme("workos", { toleranceMs: 60_000 });
 * ```
 */
export function presetScheme(
  name: PresetName,
  options: { readonly toleranceMs?: number } = {},
): ProviderScheme {
  const preset: Preset = presets[name];
  const toleranceMs = options.toleranceMs ?? preset.toleranceMs ?? 300_000;
  const { verify } = preset;
  const verifier =
    verify.kind === "hmac"
      ? hmacScheme({ ...verify.options, toleranceMs }).verifier
      : verify.kind === "token"
        ? tokenVerifier(verify.where)
        : standardWebhooksScheme({ toleranceMs }).verifier;
  return { provider: name, verifier, identity: preset.identity };
}

/**
 * A preset's source helper, for the registry: its options are the secrets and the window, its
 * scheme {@link presetScheme}.
 *
 * @example
 * ```ts
 * export const clerk = presetProvider("clerk");
 * ```
 */
export function presetProvider<N extends PresetName>(
  name: N,
): SourceHelper<N, SourceSchema<N, typeof signedWithTolerance>> {
  return defineProvider({
    name,
    options: signedWithTolerance,
    identity: presets[name].identity,
    docs: presets[name].docs,
    headers: presets[name].headers,
    scheme: (_source, context) => presetScheme(name, context.window),
  });
}
