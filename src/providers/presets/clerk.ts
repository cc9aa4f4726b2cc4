/** Clerk sends through Svix: `svix-*` headers, `whsec_` secrets. */

import { standardWebhooksId } from "../standard-webhooks.ts";
import { definePreset, svix } from "./kit.ts";

/** A Clerk source (Svix headers, `whsec_` secret). @example `clerk({ secrets: [{ env: "CLERK_WEBHOOK_SECRET" }] })` */
export const clerk = definePreset("clerk", {
  docs: "#clerk",
  ...svix,
  identity: Object.freeze({
    id: standardWebhooksId,
    type: "$.type",
    occurredAt: "$.timestamp",
    orderingKey: "$.data.id",
  }),
});
