// Payloads: each provider's documented example event, trimmed (the origin of each is cited).
import {
  bodyHmacSigner,
  presetSample,
  stableIso,
  svixSigner,
  tokenSigner,
  uuidFrom,
  uuidLike,
} from "./preset-kit.ts";
import { digits, mac, randomToken, seconds } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

const json = { signs: "body", bodyFormat: "json" } as const;
const window5m = { ...json, timestampWindowMs: 300_000 } as const;

/**
 * Clerk (through Svix): `svix-*` headers, `whsec_` secret; a `user.created` event.
 *
 * @example
 * ```ts
 * clerkSample.build({ secret: clerkSample.exampleSecret, url, nowMs: Date.now(), id: "msg_1" });
 * ```
 */
export const clerkSample: ProviderSample = presetSample({
  provider: "clerk",
  origin: "clerk.com docs, webhooks overview: user.created example payload",
  defaultType: "user.created",
  unhandledType: "organizationInvitation.revoked",
  exampleSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  traits: window5m,
  newId: () => `msg_${randomToken(27)}`,
  payload: (input, type) => ({
    body: {
      data: {
        id: input.resource ?? "user_29w83sxmDNGwOuEthce5gg56FcC",
        object: "user",
        first_name: "Example",
        email_addresses: [
          { email_address: "example@example.org", id: "idn_29w83yL7CwVlJXylYLxcslromF1" },
        ],
        ...(input.sequence === undefined ? {} : { updated_at: input.sequence * 1000 }),
      },
      object: "event",
      type,
      timestamp: (input.sequence ?? seconds(input.nowMs)) * 1000,
    },
    eventId: input.id,
  }),
  sign: svixSigner,
});

/**
 * Resend (through Svix): an `email.delivered` event.
 *
 * @example
 * ```ts
 * resendSample.defaultType; // "email.delivered"
 * ```
 */
export const resendSample: ProviderSample = presetSample({
  provider: "resend",
  origin: "resend.com docs, webhooks event types: email.delivered example",
  defaultType: "email.delivered",
  unhandledType: "contact.deleted",
  exampleSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  traits: window5m,
  newId: () => `msg_${randomToken(27)}`,
  payload: (input, type) => ({
    body: {
      type,
      created_at: stableIso(input.sequence),
      data: {
        created_at: stableIso(input.sequence),
        email_id: input.resource ?? "56761188-7520-42d8-8898-ff6fc54ce618",
        from: "Acme <onboarding@resend.dev>",
        to: ["delivered@resend.dev"],
        subject: "Sending this example",
      },
    },
    eventId: input.id,
  }),
  sign: svixSigner,
});

/**
 * WorkOS: `WorkOS-Signature: t=<ms>, v1=<hex HMAC-SHA256 of "{t}.{body}">`; a directory-sync
 * event.
 *
 * @example
 * ```ts
 * workosSample.traits("s").timestampWindowMs; // 180000
 * ```
 */
export const workosSample: ProviderSample = presetSample({
  provider: "workos",
  origin: "workos.com docs, events: dsync.user.created example",
  defaultType: "dsync.user.created",
  unhandledType: "organization_domain.verification_failed",
  exampleSecret: "workos-example-webhook-secret",
  traits: { ...json, timestampWindowMs: 180_000 },
  newId: () => `event_01${randomToken(24, "0123456789ABCDEFGHJKMNPQRSTVWXYZ")}`,
  payload: (input, type) => ({
    body: {
      id: input.id,
      event: type,
      data: {
        id: input.resource ?? "directory_user_01E1X1B89NH8Z3SDFJR4H7RGX7",
        directory_id: "directory_01ECAZ4NV9QMV47GW873HDCX74",
        first_name: "Veda",
        emails: [{ primary: true, type: "work", value: "veda@example.com" }],
        ...(input.sequence === undefined ? {} : { updated_at: stableIso(input.sequence) }),
      },
      created_at: stableIso(input.sequence),
    },
    eventId: input.id,
  }),
  sign: (body, { secret, nowMs }) => ({
    "workos-signature": `t=${nowMs}, v1=${mac("sha256", secret, `${nowMs}.${body}`, "hex")}`,
  }),
});

/**
 * Vercel: `x-vercel-signature`, hex HMAC-SHA1 of the body; a `deployment.created` event.
 *
 * @example
 * ```ts
 * vercelSample.defaultType; // "deployment.created"
 * ```
 */
export const vercelSample: ProviderSample = presetSample({
  provider: "vercel",
  origin: "vercel.com docs, webhooks API: deployment.created payload",
  defaultType: "deployment.created",
  unhandledType: "project.removed",
  exampleSecret: "vercel-example-webhook-secret",
  traits: json,
  newId: () => `${randomToken(24)}`,
  payload: (input, type) => ({
    body: {
      id: input.id,
      type,
      createdAt: (input.sequence ?? 1_764_504_000) * 1000,
      payload: {
        deployment: {
          id: input.resource ?? "dpl_2Vpe1bLzGHNTLXdtgJfCPpYtzjfu",
          url: "my-app-git-main.vercel.app",
          name: "my-app",
        },
        project: { id: "prj_12HKQaOmR5t5Uy6vdcQsNIiZgHGB" },
        target: "production",
      },
    },
    eventId: input.id,
  }),
  sign: bodyHmacSigner("x-vercel-signature", "sha1", "hex"),
});

/**
 * Sentry integration platform: `Sentry-Hook-Signature` (hex HMAC-SHA256 of the body),
 * `Request-ID` as id, `Sentry-Hook-Resource` + `action` as type.
 *
 * @example
 * ```ts
 * sentrySample.defaultType; // "issue.created"
 * ```
 */
export const sentrySample: ProviderSample = presetSample({
  provider: "sentry",
  origin: "docs.sentry.io, integration platform webhooks: issue.created payload",
  defaultType: "issue.created",
  unhandledType: "issue.ignored",
  exampleSecret: "sentry-example-client-secret",
  traits: json,
  newId: uuidLike,
  headersForRawBody: (input) => ({ "request-id": input.id }),
  payload: (input, type) => {
    const [resource = "issue", action = "created"] = type.split(".");
    return {
      body: {
        action,
        installation: { uuid: "7a485448-a9e2-4c85-8a3c-4f44175783c9" },
        data: {
          issue: {
            id: input.resource ?? "1170820242",
            shortId: "FRONTEND-1",
            title: "Error: Something went wrong",
            status: "unresolved",
          },
        },
        actor: { type: "application", id: "sentry", name: "Sentry" },
      },
      eventId: input.id,
      headers: {
        "request-id": input.id,
        "sentry-hook-resource": resource,
        "sentry-hook-timestamp": String(seconds(input.nowMs)),
      },
    };
  },
  sign: bodyHmacSigner("sentry-hook-signature", "sha256", "hex"),
});

/**
 * Bitbucket Cloud: `X-Hub-Signature: sha256=<hex>`, `X-Request-UUID` as id, `X-Event-Key` as type.
 *
 * @example
 * ```ts
 * bitbucketSample.defaultType; // "repo:push"
 * ```
 */
export const bitbucketSample: ProviderSample = presetSample({
  provider: "bitbucket",
  origin: "support.atlassian.com, Bitbucket Cloud event payloads: repo:push",
  defaultType: "repo:push",
  unhandledType: "repo:transfer",
  exampleSecret: "bitbucket-example-secret",
  traits: json,
  newId: uuidLike,
  headersForRawBody: (input) => ({ "x-request-uuid": input.id }),
  payload: (input, type) => ({
    body: {
      actor: {
        display_name: "Jane Doe",
        type: "user",
        uuid: "{d301aafa-d676-4ee0-88be-962be7417567}",
      },
      repository: {
        type: "repository",
        full_name: input.resource ?? "acme/web",
        uuid: "{f2a1f7b4-2c3f-4c8b-9a1e-2d7f1c3a9b10}",
      },
      push: {
        changes: [{ new: { type: "branch", name: "main", target: { hash: "709d658dc5b6" } } }],
      },
    },
    eventId: input.id,
    headers: { "x-request-uuid": input.id, "x-event-key": type, "x-hook-uuid": uuidFrom("hook") },
  }),
  sign: bodyHmacSigner("x-hub-signature", "sha256", "hex", "sha256="),
});

/**
 * Jira Cloud: `X-Hub-Signature: sha256=<hex>`, `X-Atlassian-Webhook-Identifier` as id.
 *
 * @example
 * ```ts
 * jiraSample.defaultType; // "jira:issue_updated"
 * ```
 */
export const jiraSample: ProviderSample = presetSample({
  provider: "jira",
  origin: "developer.atlassian.com, Jira Cloud webhooks: issue_updated example",
  defaultType: "jira:issue_updated",
  unhandledType: "jira:worklog_deleted",
  exampleSecret: "jira-example-webhook-secret",
  traits: json,
  newId: () => digits(String(Math.random()), 13),
  headersForRawBody: (input) => ({ "x-atlassian-webhook-identifier": input.id }),
  payload: (input, type) => ({
    body: {
      timestamp: (input.sequence ?? 1_764_504_000) * 1000,
      webhookEvent: type,
      issue_event_type_name: "issue_generic",
      user: { accountId: "5b10a2844c20165700ede21g", displayName: "Mia Krystof" },
      issue: {
        id: "10002",
        key: input.resource ?? "PROJ-42",
        fields: { summary: "Checkout fails on Safari", status: { name: "In Progress" } },
      },
      changelog: {
        id: "10400",
        items: [{ field: "status", fromString: "To Do", toString: "In Progress" }],
      },
    },
    eventId: input.id,
    headers: { "x-atlassian-webhook-identifier": input.id, "x-atlassian-webhook-retry": "0" },
  }),
  sign: bodyHmacSigner("x-hub-signature", "sha256", "hex", "sha256="),
});

/**
 * Zendesk: `X-Zendesk-Webhook-Signature` = base64 HMAC-SHA256 of `{timestamp}{body}`, the
 * timestamp (RFC 3339) in `X-Zendesk-Webhook-Signature-Timestamp`; a user.created event.
 *
 * @example
 * ```ts
 * zendeskSample.traits("s").timestampWindowMs; // 300000
 * ```
 */
export const zendeskSample: ProviderSample = presetSample({
  provider: "zendesk",
  origin: "developer.zendesk.com, webhooks event types: zen:event-type:user.created",
  defaultType: "zen:event-type:user.created",
  unhandledType: "zen:event-type:user.identity_deleted",
  exampleSecret: "dGhpc19zZWNyZXRfaXNfZm9yX3Rlc3Rpbmdfb25seQ==",
  traits: window5m,
  newId: uuidLike,
  payload: (input, type) => ({
    body: {
      account_id: 22129848,
      detail: {
        created_at: stableIso(input.sequence),
        email: "jane@example.com",
        id: "7140298291871",
      },
      event: {},
      id: input.id,
      subject: `zen:user:${input.resource ?? "7140298291871"}`,
      time: stableIso(input.sequence),
      type,
      zendesk_event_version: "2022-11-06",
    },
    eventId: input.id,
  }),
  sign: (body, { secret, nowMs }) => {
    const timestamp = new Date(seconds(nowMs) * 1000).toISOString().replace(".000Z", "Z");
    return {
      "x-zendesk-webhook-signature-timestamp": timestamp,
      "x-zendesk-webhook-signature": mac("sha256", secret, `${timestamp}${body}`, "base64"),
    };
  },
});

/**
 * Telegram Bot API: `X-Telegram-Bot-Api-Secret-Token` (the `secret_token` of `setWebhook`), a
 * message Update. Nothing is signed.
 *
 * @example
 * ```ts
 * telegramSample.traits("s").signs; // "nothing"
 * ```
 */
export const telegramSample: ProviderSample = presetSample({
  provider: "telegram",
  origin: "core.telegram.org/bots/api, Update and Message objects",
  defaultType: "message",
  unhandledType: "chat_join_request",
  exampleSecret: "telegram-example-secret-token",
  traits: { signs: "nothing", bodyFormat: "json" },
  newId: () => digits(String(Math.random()), 9),
  payload: (input, type) => ({
    body: {
      update_id: Number(input.id) || input.id,
      [type]: {
        message_id: 1365,
        from: { id: 1111111, is_bot: false, first_name: "Test" },
        chat: { id: Number(input.resource ?? "1111111") || input.resource, type: "private" },
        date: input.sequence ?? 1_764_504_000,
        text: "/start",
      },
    },
    eventId: String(Number(input.id) || input.id),
  }),
  sign: tokenSigner("x-telegram-bot-api-secret-token"),
});
