/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64>`, HMAC-SHA256 over the raw body keyed with the
 * app's client secret (UTF-8). Nothing else is signed and there is no timestamp.
 */

import { signed } from "../config/source-fields.ts";
import { field, jsonOrUndefined, scalarText } from "./body.ts";
import { defineProvider } from "./definition.ts";
import { hmacScheme } from "./hmac.ts";
import type { IdentityContext, IdentitySpec, ProviderScheme } from "./types.ts";

/**
 * Options of the Shopify scheme (none yet; kept for symmetry with the other schemes).
 *
 * @example
 * ```ts
 * const options: ShopifyOptions = {};
 * ```
 */
export type ShopifyOptions = Record<string, never>;

/** Base64 HMAC-SHA256 of the raw body with the client secret: the generic HMAC, as data. */
const verifier = hmacScheme({
  header: "x-shopify-hmac-sha256",
  algorithm: "sha256",
  encoding: "base64",
  secretEncoding: "utf8",
  signedContent: "{body}",
  timestampUnit: "s",
  toleranceMs: 0,
}).verifier;

/**
 * Shopify ordering key: the resource's `admin_graphql_api_id` (`gid://shopify/Order/1`, unique
 * across resource types), else its numeric `id` as text. Non-JSON bodies have none.
 *
 * @example
 * ```ts
 * shopifyOrderingKey(ctx); // "gid://shopify/Order/820982911946154508"
 * ```
 */
export function shopifyOrderingKey(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  return scalarText(field(body, "admin_graphql_api_id")) ?? scalarText(field(body, "id"));
}

/**
 * Where a Shopify event's identity lives: the webhook id header (stable across retries of one
 * delivery), the topic header as type (`orders/create`), the triggered-at header, the resource
 * from {@link shopifyOrderingKey}, and the resource's `updated_at` as version.
 *
 * @example
 * ```ts
 * shopifyIdentity.id; // "header:x-shopify-webhook-id"
 * ```
 */
export const shopifyIdentity: IdentitySpec = Object.freeze({
  id: "header:x-shopify-webhook-id",
  type: "header:x-shopify-topic",
  occurredAt: "header:x-shopify-triggered-at",
  orderingKey: shopifyOrderingKey,
  version: "$.updated_at",
});

/**
 * The Shopify scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. header absent or blank → HOOKINBOX_SIGNATURE_MISSING;
 * 3. every active secret is tried (Shopify may take an hour to switch to a new secret, so list
 *    both); a value that is not canonical base64 matches nothing; no match →
 *    HOOKINBOX_SIGNATURE_MISMATCH.
 *
 * @example
 * ```ts
 * const scheme = shopifyScheme();
 * scheme.verifier.verify(request, [{ index: 0, value: "shpss_…" }], Date.now());
 * ```
 */
export function shopifyScheme(_options: ShopifyOptions = {}): ProviderScheme {
  return { provider: "shopify", identity: shopifyIdentity, verifier };
}

/**
 * A Shopify source (`X-Shopify-Hmac-Sha256`, id `X-Shopify-Webhook-Id`). Returns `{ provider: "shopify", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { shopify: shopify({ secrets: [{ env: "SHOPIFY_SECRET" }] }) }
 * ```
 */
export const shopify = defineProvider({
  name: "shopify",
  options: signed,
  identity: shopifyIdentity,
  docs: "#shopify",
  headers: {
    signature: ["x-shopify-hmac-sha256"],
    context: [
      "x-shopify-topic",
      "x-shopify-shop-domain",
      "x-shopify-webhook-id",
      "x-shopify-event-id",
      "x-shopify-api-version",
      "x-shopify-triggered-at",
    ],
  },
  scheme: () => shopifyScheme(),
});
