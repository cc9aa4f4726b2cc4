// Payloads: each provider's documented example notification, trimmed (origins cited). Their GET
// or unsigned handshakes are answered by hookinbox before verification and are covered by
// test/ingest/handshakes-beyond-post.test.ts; these samples send the signed events.
import { createHash } from "node:crypto";
import {
  bodyHmacSigner,
  presetSample,
  stableIso,
  tokenSigner,
  uuidFrom,
  uuidLike,
} from "./preset-kit.ts";
import { digits, randomToken } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * Meta (WhatsApp Cloud API): `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>` with
 * the app secret; an inbound text message. Meta sends no delivery id: the key is
 * `meta:` + SHA-256 of the message ids the update carries (`messages:<wamid>`).
 *
 * @example
 * ```ts
 * metaSample.sourceOptions?.(url); // { verifyTokens: ["meta-example-verify-token"] }
 * ```
 */
export const metaSample: ProviderSample = presetSample({
  provider: "meta",
  origin: "developers.facebook.com, WhatsApp Cloud API webhooks: text message payload",
  defaultType: "messages",
  unhandledType: "message_template_status_update",
  exampleSecret: "meta-example-app-secret",
  traits: { signs: "body", bodyFormat: "json" },
  newId: () => `wamid.${randomToken(40)}`,
  sourceOptions: () => ({ verifyTokens: ["meta-example-verify-token"] }),
  payload: (input, type) => ({
    body: {
      object: "whatsapp_business_account",
      entry: [
        {
          id: "102290129340398",
          changes: [
            {
              value: {
                messaging_product: "whatsapp",
                metadata: {
                  display_phone_number: "15550783881",
                  phone_number_id: "106540352242922",
                },
                contacts: [{ profile: { name: "Sheena Nelson" }, wa_id: "16505551234" }],
                messages: [
                  {
                    from: input.resource ?? "16505551234",
                    id: input.id,
                    timestamp: String(input.sequence ?? 1_764_504_000),
                    text: { body: "Does it come in another color?" },
                    type: "text",
                  },
                ],
              },
              field: type,
            },
          ],
        },
      ],
    },
    eventId: `meta:${sha256(`${type}:${input.id}`)}`,
  }),
  sign: bodyHmacSigner("x-hub-signature-256", "sha256", "hex", "sha256="),
});

/**
 * Dropbox: `X-Dropbox-Signature`, hex HMAC-SHA256 of the body with the app secret; a
 * list_folder notification. Dropbox sends no id (a notification means "look again"), so every
 * notification is its own event.
 *
 * @example
 * ```ts
 * dropboxSample.traits("s").dedup; // "per-notification"
 * ```
 */
export const dropboxSample: ProviderSample = presetSample({
  provider: "dropbox",
  origin: "dropbox.com developers, webhooks: notification body",
  defaultType: "list_folder",
  unhandledType: "list_folder",
  exampleSecret: "dropbox-example-app-secret",
  traits: { signs: "body", bodyFormat: "json", dedup: "per-notification" },
  newId: () => `dbid:${randomToken(40)}`,
  payload: (input) => ({
    body: {
      list_folder: { accounts: [input.resource ?? input.id] },
      delta: { users: [Number(digits(input.id, 8))] },
    },
    eventId: undefined,
  }),
  sign: bodyHmacSigner("x-dropbox-signature", "sha256", "hex"),
});

/**
 * Okta event hooks: the configured authorization header carries the secret (nothing is signed);
 * a batch of one `user.session.start` event, keyed by its `uuid`.
 *
 * @example
 * ```ts
 * oktaSample.defaultType; // "user.session.start"
 * ```
 */
export const oktaSample: ProviderSample = presetSample({
  provider: "okta",
  origin: "developer.okta.com, event hooks: sample event delivery",
  defaultType: "user.session.start",
  unhandledType: "application.lifecycle.deactivate",
  exampleSecret: "okta-example-hook-authorization",
  traits: { signs: "nothing", bodyFormat: "json" },
  newId: uuidLike,
  payload: (input, type) => ({
    body: {
      eventType: "com.okta.event_hook",
      eventTypeVersion: "1.0",
      cloudEventsVersion: "0.1",
      source: "https://dev-123456.okta.com/api/v1/eventHooks/whoql0HfiLGPWc8Jx0g3",
      eventId: uuidFrom(input.id),
      data: {
        events: [
          {
            uuid: input.id,
            published: stableIso(input.sequence),
            eventType: type,
            version: "0",
            displayMessage: "User login to Okta",
            severity: "INFO",
            actor: { id: "00u1qw1mqitPHM8AJ0g7", type: "User", alternateId: "admin@example.com" },
            target: [{ id: input.resource ?? "00u1qw1mqitPHM8AJ0g7", type: "User" }],
            outcome: { result: "SUCCESS" },
          },
        ],
      },
      eventTime: stableIso(input.sequence),
      contentType: "application/json",
    },
    eventId: input.id,
  }),
  sign: tokenSigner("authorization"),
});

/**
 * Microsoft Graph change notifications: each item of `value` carries the subscription's
 * `clientState` (the secret; nothing is signed). Graph sends no notification id: the key is
 * `<subscriptionId>:<changeType>:<resource>:<@odata.etag>`.
 *
 * @example
 * ```ts
 * msgraphSample.defaultType; // "created"
 * ```
 */
export const msgraphSample: ProviderSample = presetSample({
  provider: "msgraph",
  origin: "learn.microsoft.com, Graph change notifications: notification payload",
  defaultType: "created",
  unhandledType: "deleted",
  exampleSecret: "secretClientValue",
  traits: { signs: "nothing", bodyFormat: "json" },
  newId: () => randomToken(32, "0123456789abcdef"),
  payload: (input, type) => {
    const subscription = "7f105c7d-2dc5-4530-97cd-4e7ae6534c07";
    const resource = `Users/${input.resource ?? "8bc8d6a5-2a5a-4c7b-bd6f-d0d44b2f1f6d"}/Messages/${input.id}`;
    const etag = `W/"${input.id}"`;
    return {
      body: {
        value: [
          {
            subscriptionId: subscription,
            subscriptionExpirationDateTime: "2026-12-03T18:23:45.9356913Z",
            changeType: type,
            resource,
            resourceData: {
              "@odata.type": "#Microsoft.Graph.Message",
              "@odata.id": resource,
              "@odata.etag": etag,
              id: input.id,
            },
            clientState: input.secret,
            tenantId: "84bd8158-6d4d-4958-8b9f-9d6445542f95",
          },
        ],
      },
      eventId: `${subscription}:${type}:${resource}:${etag}`,
    };
  },
  sign: () => ({}),
});

/**
 * Asana: `X-Hook-Signature`, hex HMAC-SHA256 of the body with the secret Asana handed out in
 * its `X-Hook-Secret` handshake; one `changed` event. Asana sends no event id: the key is
 * `<resource.gid>:<action>:<created_at>[:<change.field>]`.
 *
 * @example
 * ```ts
 * asanaSample.defaultType; // "changed"
 * ```
 */
export const asanaSample: ProviderSample = presetSample({
  provider: "asana",
  origin: "developers.asana.com, webhooks: event payload",
  defaultType: "changed",
  unhandledType: "undeleted",
  exampleSecret: "asana-example-hook-secret",
  traits: { signs: "body", bodyFormat: "json" },
  newId: () => digits(String(Math.random()), 16),
  payload: (input, type) => {
    const gid = input.resource ?? input.id;
    const created = stableIso(input.sequence);
    return {
      body: {
        events: [
          {
            user: { gid: "1199999999999999", resource_type: "user" },
            created_at: created,
            action: type,
            resource: { gid, resource_type: "task", resource_subtype: "default_task" },
            parent: null,
            change: { field: "assignee", action: "changed" },
          },
        ],
      },
      eventId: `${gid}:${type}:${created}:assignee`,
    };
  },
  sign: bodyHmacSigner("x-hook-signature", "sha256", "hex"),
});
