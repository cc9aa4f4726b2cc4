/** `Typeform-Signature: sha256=<base64>` over the body. */

import { definePreset, hexOptions } from "./kit.ts";

/** A Typeform source (`Typeform-Signature: sha256=<base64>`). @example `typeform({ secrets: [{ env: "TYPEFORM_SECRET" }] })` */
export const typeform = definePreset("typeform", {
  docs: "#typeform",
  headers: { signature: ["typeform-signature"] },
  verify: {
    kind: "hmac",
    options: { ...hexOptions("typeform-signature"), prefix: "sha256=", encoding: "base64" },
  },
  identity: Object.freeze({
    id: "$.event_id",
    type: "$.event_type",
    occurredAt: "$.form_response.submitted_at",
    orderingKey: "$.form_response.form_id",
  }),
});
