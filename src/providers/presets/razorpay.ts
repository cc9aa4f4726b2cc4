/** `X-Razorpay-Signature`: hex HMAC-SHA256 of the body; `x-razorpay-event-id` is the id. */

import { field, jsonOrUndefined, path, scalarText } from "../body.ts";
import type { IdentityContext } from "../types.ts";
import { definePreset, hexBody } from "./kit.ts";

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

/** A Razorpay source (`X-Razorpay-Signature`). @example `razorpay({ secrets: [{ env: "RAZORPAY_WEBHOOK_SECRET" }] })` */
export const razorpay = definePreset("razorpay", {
  docs: "#razorpay",
  headers: { signature: ["x-razorpay-signature"], context: ["x-razorpay-event-id"] },
  verify: hexBody("x-razorpay-signature"),
  identity: Object.freeze({
    id: "header:x-razorpay-event-id",
    type: "$.event",
    occurredAt: "$.created_at",
    orderingKey: razorpayOrderingKey,
  }),
});
