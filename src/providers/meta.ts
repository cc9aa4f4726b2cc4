/**
 * Meta webhooks (WhatsApp Cloud API, Messenger, Instagram): events carry
 * `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the raw body keyed with the **app
 * secret**; the endpoint is verified once with `GET ?hub.mode=subscribe&hub.verify_token=…&
 * hub.challenge=…`, where the verify token is a string the operator chose in the dashboard.
 */

import { createHash } from "node:crypto";
import { z } from "zod";
import { secretSchema, signed } from "../config/source-fields.ts";
import { field, jsonOrUndefined, scalarText } from "./body.ts";
import { metaVerification } from "./challenges.ts";
import { defineProvider } from "./definition.ts";
import { hexBodyVerifier } from "./presets/kit.ts";
import type { IdentityContext, IdentitySpec, ProviderScheme } from "./types.ts";

/**
 * Options of the Meta scheme.
 *
 * @example
 * ```ts
 * const options: MetaOptions = { verifyTokens: ["my verify token"] };
 * ```
 */
export interface MetaOptions {
  /** The verify token(s) typed into the app dashboard (several during a change). */
  readonly verifyTokens: readonly string[];
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** The named fields of every update a Meta body carries, in order. */
function updateFields(body: unknown): string[] {
  const parts: string[] = [];
  for (const entry of list(field(body, "entry"))) {
    const entryId = scalarText(field(entry, "id")) ?? "";
    for (const change of list(field(entry, "changes"))) {
      const value = field(change, "value");
      const name = scalarText(field(change, "field")) ?? "";
      const messages = list(field(value, "messages")).map((m) => scalarText(field(m, "id")));
      const statuses = list(field(value, "statuses")).map(
        (s) => `${scalarText(field(s, "id"))}:${scalarText(field(s, "status"))}`,
      );
      const items = [...messages, ...statuses].filter((p) => p !== undefined);
      parts.push(
        items.length > 0
          ? `${name}:${items.join("+")}`
          : `${entryId}:${name}:${scalarText(field(entry, "time")) ?? JSON.stringify(value)}`,
      );
    }
    for (const event of list(field(entry, "messaging"))) {
      const mid = scalarText(field(field(event, "message"), "mid"));
      const sender = scalarText(field(field(event, "sender"), "id"));
      parts.push(mid ?? `${entryId}:${sender}:${scalarText(field(event, "timestamp"))}`);
    }
  }
  return parts;
}

/**
 * The Meta dedup key. Meta sends no delivery id and batches updates, so the key is
 * `meta:<sha256 of the updates' named fields>`: per update, the WhatsApp message ids (`wamid…`),
 * status ids with their status, Messenger/Instagram message ids (`mid`), else entry id, field
 * and time. A retry repeats them all; a different update changes them. The hash only shortens
 * the list (it is not a hash of the body: re-serialising the JSON does not change it).
 *
 * @example
 * ```ts
 * metaEventKey(ctx); // "meta:5f0c…"
 * ```
 */
export function metaEventKey(context: IdentityContext): string | undefined {
  const parts = updateFields(jsonOrUndefined(context));
  if (parts.length === 0) return undefined;
  return `meta:${createHash("sha256").update(parts.join("\n")).digest("hex")}`;
}

/**
 * The Meta event type: `<object>.<field>` of the first change (`whatsapp_business_account.messages`),
 * or `<object>.messaging` for Messenger and Instagram messaging.
 *
 * @example
 * ```ts
 * metaEventType(ctx); // "whatsapp_business_account.messages"
 * ```
 */
export function metaEventType(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  const object = scalarText(field(body, "object"));
  const entry = list(field(body, "entry"))[0];
  const change = list(field(entry, "changes"))[0];
  const name =
    scalarText(field(change, "field")) ?? (field(entry, "messaging") ? "messaging" : undefined);
  if (object === undefined) return name;
  return name === undefined ? object : `${object}.${name}`;
}

/**
 * The Meta ordering key: the conversation: the WhatsApp user (`messages[0].from`, or a
 * status's `recipient_id`), the Messenger/Instagram sender, else the entry (account, page).
 *
 * @example
 * ```ts
 * metaOrderingKey(ctx); // "16505551234"
 * ```
 */
export function metaOrderingKey(context: IdentityContext): string | undefined {
  const entry = list(field(jsonOrUndefined(context), "entry"))[0];
  const value = field(list(field(entry, "changes"))[0], "value");
  return (
    scalarText(field(list(field(value, "messages"))[0], "from")) ??
    scalarText(field(list(field(value, "statuses"))[0], "recipient_id")) ??
    scalarText(field(field(list(field(entry, "messaging"))[0], "sender"), "id")) ??
    scalarText(field(entry, "id"))
  );
}

/**
 * Where a Meta event's identity lives: {@link metaEventKey}, {@link metaEventType},
 * {@link metaOrderingKey}.
 *
 * @example
 * ```ts
 * metaIdentity.id === metaEventKey; // true
 * ```
 */
export const metaIdentity: IdentitySpec = Object.freeze({
  id: metaEventKey,
  type: metaEventType,
  orderingKey: metaOrderingKey,
});

/**
 * The Meta scheme: events verified like GitHub's `X-Hub-Signature-256` (codes as in
 * `hmacScheme`), the verification GET answered by {@link metaVerification}.
 *
 * @example
 * ```ts
 * const scheme = metaScheme({ verifyTokens: ["my verify token"] });
 * ```
 */
export function metaScheme(options: MetaOptions): ProviderScheme {
  const verifyTokens = [...options.verifyTokens];
  return {
    provider: "meta",
    verifier: hexBodyVerifier("x-hub-signature-256", "sha256="),
    identity: metaIdentity,
    challenge: (request) => metaVerification(request, verifyTokens),
  };
}

/**
 * A Meta source (WhatsApp, Messenger, Instagram: `X-Hub-Signature-256`, GET verify-token handshake). Returns `{ provider: "meta", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { meta: meta({ secrets: [{ env: "META_APP_SECRET" }], verifyTokens: [{ env: "META_VERIFY_TOKEN" }] }) }
 * ```
 */
export const meta = defineProvider({
  name: "meta",
  options: {
    ...signed,
    /** The verify token(s) typed into the Meta app dashboard (answers the GET handshake). */
    verifyTokens: z.array(secretSchema).min(1, "Meta's GET handshake needs a verify token"),
  },
  identity: metaIdentity,
  docs: "#meta-whatsapp-messenger-instagram",
  headers: { signature: ["x-hub-signature-256"] },
  scheme: (source, context) =>
    metaScheme({
      verifyTokens: source.verifyTokens.map((token, i) =>
        context.secret(token, i, `verifyTokens[${i}]`),
      ),
    }),
});
