/** Coinbase Commerce: `X-CC-Webhook-Signature`, hex HMAC-SHA256 of the body. */

import { definePreset, hexBody } from "./kit.ts";

/** A Coinbase Commerce source (`X-CC-Webhook-Signature`). @example `coinbase({ secrets: [{ env: "COINBASE_COMMERCE_SECRET" }] })` */
export const coinbase = definePreset("coinbase", {
  docs: "#coinbase-commerce",
  headers: { signature: ["x-cc-webhook-signature"] },
  verify: hexBody("x-cc-webhook-signature"),
  identity: Object.freeze({
    id: "$.event.id",
    type: "$.event.type",
    occurredAt: "$.event.created_at",
    orderingKey: "$.event.data.code",
  }),
});
