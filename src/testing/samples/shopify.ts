// Payload: Shopify's orders/create example webhook (shopify.dev, "Webhooks > orders/create"),
// trimmed to the order's identity, state and one line item.
import { randomUUID } from "node:crypto";
import { digits, mac } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>` keyed with the app's
 * client secret; the id in `X-Shopify-Webhook-Id`, the topic in `X-Shopify-Topic`.
 *
 * @example
 * ```ts
 * shopifySample.build({ secret: "s", url, nowMs: Date.now(), id: shopifySample.newId() }).headers["x-shopify-topic"]; // "orders/create"
 * ```
 */
export const shopifySample: ProviderSample = {
  provider: "shopify",
  origin: "shopify.dev webhook example for orders/create, trimmed",
  defaultType: "orders/create",
  unhandledType: "shop/update",
  exampleSecret: "shpss_hookinbox_example_client_secret",
  traits: () => ({ signs: "body", bodyFormat: "json" }),
  newId: () => randomUUID(),
  build(input) {
    const type = input.type ?? this.defaultType;
    const id =
      input.resource === undefined ? 820982911946154500 : Number(digits(input.resource, 15));
    const updated = new Date(
      input.sequence === undefined ? input.nowMs : input.sequence * 1000,
    ).toISOString();
    const body =
      input.body ??
      JSON.stringify({
        id,
        admin_graphql_api_id: `gid://shopify/Order/${id}`,
        email: "jon@example.com",
        created_at: "2021-12-31T19:00:00-05:00",
        updated_at: updated,
        currency: "USD",
        financial_status: "voided",
        fulfillment_status: "pending",
        name: "#9999",
        total_price: "403.00",
        line_items: [{ id: 866550311766439000, quantity: 1, sku: "IPOD2008PINK", price: "199.00" }],
      });
    return {
      url: input.url,
      headers: {
        "content-type": "application/json",
        "x-shopify-topic": type,
        "x-shopify-hmac-sha256": mac("sha256", input.secret, body, "base64"),
        "x-shopify-shop-domain": "hookinbox-example.myshopify.com",
        "x-shopify-api-version": "2024-07",
        "x-shopify-webhook-id": input.id,
        "x-shopify-event-id": digits(input.id, 12),
        "x-shopify-triggered-at": new Date(input.nowMs).toISOString(),
      },
      body,
      eventId: input.id,
      type,
      version: updated,
    };
  },
};
