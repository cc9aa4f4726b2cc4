/** `WorkOS-Signature: t=<ms>, v1=<hex>` over `{t}.{body}`; the SDK allows 180 s. */

import { definePreset, timestampedHex } from "./kit.ts";

/** A WorkOS source (`WorkOS-Signature`, 180 s window). @example `workos({ secrets: [{ env: "WORKOS_WEBHOOK_SECRET" }] })` */
export const workos = definePreset("workos", {
  docs: "#workos",
  headers: { signature: ["workos-signature"] },
  verify: timestampedHex("workos-signature", "ms"),
  toleranceMs: 180_000,
  identity: Object.freeze({
    id: "$.id",
    type: "$.event",
    occurredAt: "$.created_at",
    orderingKey: "$.data.id",
  }),
});
