/** `x-vercel-signature`: hex HMAC-SHA1 of the body with the webhook (or integration) secret. */

import { definePreset, hexOptions } from "./kit.ts";

/** A Vercel source (`x-vercel-signature`, HMAC-SHA1). @example `vercel({ secrets: [{ env: "VERCEL_WEBHOOK_SECRET" }] })` */
export const vercel = definePreset("vercel", {
  docs: "#vercel",
  headers: { signature: ["x-vercel-signature"] },
  verify: { kind: "hmac", options: { ...hexOptions("x-vercel-signature"), algorithm: "sha1" } },
  identity: Object.freeze({
    id: "$.id",
    type: "$.type",
    occurredAt: "$.createdAt",
    orderingKey: "$.payload.deployment.id",
  }),
});
