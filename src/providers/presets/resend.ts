/** Resend sends through Svix: `svix-*` headers, `whsec_` secrets. */

import { field, jsonOrUndefined, scalarText } from "../body.ts";
import { standardWebhooksId } from "../standard-webhooks.ts";
import type { IdentityContext } from "../types.ts";
import { definePreset, svix } from "./kit.ts";

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

/** A Resend source (Svix headers, `whsec_` secret). @example `resend({ secrets: [{ env: "RESEND_WEBHOOK_SECRET" }] })` */
export const resend = definePreset("resend", {
  docs: "#resend",
  ...svix,
  identity: Object.freeze({
    id: standardWebhooksId,
    type: "$.type",
    occurredAt: "$.created_at",
    orderingKey: resendOrderingKey,
  }),
});
