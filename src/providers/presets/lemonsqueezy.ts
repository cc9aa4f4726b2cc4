/** `X-Signature`: hex HMAC-SHA256 of the body with the webhook's signing secret. */

import { field, jsonOrUndefined, path, scalarText } from "../body.ts";
import type { IdentityContext } from "../types.ts";
import { definePreset, hexBody, joined } from "./kit.ts";

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

/** A Lemon Squeezy source (`X-Signature`). @example `lemonsqueezy({ secrets: [{ env: "LEMONSQUEEZY_SECRET" }] })` */
export const lemonsqueezy = definePreset("lemonsqueezy", {
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
});
