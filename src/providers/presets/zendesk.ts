/**
 * Zendesk: `X-Zendesk-Webhook-Signature`, base64 HMAC-SHA256 of
 * `{X-Zendesk-Webhook-Signature-Timestamp}{body}`; the timestamp is RFC 3339.
 */

import { field, jsonOrUndefined, scalarText } from "../body.ts";
import { readHeader } from "../match.ts";
import type { IdentityContext } from "../types.ts";
import { definePreset, hexOptions } from "./kit.ts";

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

/** A Zendesk source (`X-Zendesk-Webhook-Signature`). @example `zendesk({ secrets: [{ env: "ZENDESK_SIGNING_SECRET" }] })` */
export const zendesk = definePreset("zendesk", {
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
});
