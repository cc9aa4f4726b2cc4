/** `Calendly-Webhook-Signature: t=<s>,v1=<hex>` over `{t}.{body}`; Calendly's example allows 3 min. */

import { field, jsonOrUndefined, path, scalarText } from "../body.ts";
import type { IdentityContext } from "../types.ts";
import { definePreset, joined, timestampedHex } from "./kit.ts";

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

/** A Calendly source (`Calendly-Webhook-Signature`, 3 min window). @example `calendly({ secrets: [{ env: "CALENDLY_SIGNING_KEY" }] })` */
export const calendly = definePreset("calendly", {
  docs: "#calendly",
  headers: { signature: ["calendly-webhook-signature"] },
  verify: timestampedHex("calendly-webhook-signature", "s"),
  toleranceMs: 180_000,
  identity: Object.freeze({
    id: calendlyEventKey,
    type: "$.event",
    occurredAt: "$.created_at",
    orderingKey: "$.payload.event",
  }),
});
