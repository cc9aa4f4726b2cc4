/** Bitbucket Cloud and Data Center: `X-Hub-Signature: sha256=<hex>` over the body. */

import { readHeader } from "../match.ts";
import type { IdentityContext } from "../types.ts";
import { definePreset, hexBody } from "./kit.ts";

/**
 * The Bitbucket delivery id: `X-Request-UUID` (Cloud), else `X-Request-Id` (Data Center).
 *
 * @example
 * ```ts
 * bitbucketDeliveryId(ctx); // "afe3b5c8-…"
 * ```
 */
export function bitbucketDeliveryId(context: IdentityContext): string | undefined {
  return (
    readHeader(context.headers, "x-request-uuid") ?? readHeader(context.headers, "x-request-id")
  );
}

/** A Bitbucket source (`X-Hub-Signature: sha256=`). @example `bitbucket({ secrets: [{ env: "BITBUCKET_SECRET" }] })` */
export const bitbucket = definePreset("bitbucket", {
  docs: "#bitbucket",
  headers: {
    signature: ["x-hub-signature"],
    context: ["x-request-uuid", "x-event-key", "x-hook-uuid"],
  },
  verify: hexBody("x-hub-signature", "sha256="),
  identity: Object.freeze({
    id: bitbucketDeliveryId,
    type: "header:x-event-key",
    orderingKey: "$.repository.full_name",
  }),
});
