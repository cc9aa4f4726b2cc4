// Payload: a `payment.updated` notification as in Square's webhook reference
// (developer.squareup.com/reference/square/payments-api/webhooks/payment.updated), trimmed.
import { randomUUID } from "node:crypto";
import { mac } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

/**
 * Square: `x-square-hmacsha256-signature: <base64 HMAC-SHA256 of "{notification URL}{body}">`;
 * the notification URL is the URL the sample is sent to. Dedup key: `event_id`.
 *
 * @example
 * ```ts
 * squareSample.build({ secret: "sig-key", url: "https://hooks.example.com/webhooks/square", nowMs: Date.now(), id: "e1" });
 * ```
 */
export const squareSample: ProviderSample = {
  provider: "square",
  origin: "developer.squareup.com payment.updated webhook example, trimmed",
  defaultType: "payment.updated",
  unhandledType: "labor.shift.updated",
  exampleSecret: "hookinbox-example-square-signature-key",
  traits: () => ({ signs: "body", bodyFormat: "json" }),
  newId: () => randomUUID(),
  sourceOptions: (url) => ({ notificationUrl: url }),
  build(input) {
    const type = input.type ?? this.defaultType;
    const id = input.resource ?? "KkAkhdMsgzn59SM8A89WgKwekxLZY";
    const updated = new Date(
      input.sequence === undefined ? input.nowMs : input.sequence * 1000,
    ).toISOString();
    const body =
      input.body ??
      JSON.stringify({
        merchant_id: "6SSW7HV8K2ST5",
        type,
        event_id: input.id,
        created_at: updated,
        data: {
          type: "payment",
          id,
          object: {
            payment: {
              id,
              amount_money: { amount: 100, currency: "USD" },
              status: "COMPLETED",
              source_type: "CARD",
              location_id: "S8GWD5R9QB376",
              order_id: "03O3USaPaAaFnI6kkwB1JxGgBsUZY",
              updated_at: updated,
              version: input.sequence ?? 2,
            },
          },
        },
      });
    return {
      url: input.url,
      headers: {
        "content-type": "application/json",
        "user-agent": "Square Connect v2",
        "x-square-hmacsha256-signature": mac("sha256", input.secret, input.url + body, "base64"),
        ...(input.redelivery
          ? { "square-retry-number": "1", "square-retry-reason": "http_timeout" }
          : {}),
      },
      body,
      eventId: input.body === undefined ? input.id : undefined,
      type,
      version: String(input.sequence ?? 2),
    };
  },
};
