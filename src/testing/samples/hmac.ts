// Payload: a neutral CRM-style event; the generic scheme has no provider to copy from, so the
// sample uses the layout its `sourceOptions` describe.
import { mac, randomToken, seconds } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

/** The header layout the generic-HMAC sample signs with (a source must be configured alike). */
export const hmacSampleLayout = {
  header: "x-signature",
  prefix: "sha256=",
  algorithm: "sha256",
  encoding: "hex",
  signedContent: "{timestamp}.{body}",
  timestampHeader: "x-timestamp",
  idHeader: "x-event-id",
  identity: { type: "$.kind", orderingKey: "$.objectId", version: "$.seq" },
} as const;

/**
 * The generic HMAC scheme with the layout of {@link hmacSampleLayout}: `x-signature:
 * sha256=<hex HMAC-SHA256 of "{x-timestamp}.{body}">`, the event id in `x-event-id`.
 *
 * @example
 * ```ts
 * hmacSample.sourceOptions?.(url); // { header: "x-signature", … }
 * ```
 */
export const hmacSample: ProviderSample = {
  provider: "hmac",
  origin: "hookinbox's generic HMAC layout (no provider payload)",
  defaultType: "contact.updated",
  unhandledType: "contact.exported",
  exampleSecret: "hmac-hookinbox-example-secret",
  traits: () => ({ signs: "body", timestampWindowMs: 300_000, bodyFormat: "json" }),
  newId: () => `ev_${randomToken(20)}`,
  sourceOptions: () => ({ ...hmacSampleLayout, identity: { ...hmacSampleLayout.identity } }),
  build(input) {
    const t = seconds(input.nowMs);
    const type = input.type ?? this.defaultType;
    const body =
      input.body ??
      JSON.stringify({
        eventId: input.id,
        kind: type,
        objectId: input.resource ?? "contact_8812",
        seq: input.sequence ?? t,
        data: { email: "jane@example.com", plan: "pro" },
      });
    return {
      url: input.url,
      headers: {
        "content-type": "application/json",
        "x-event-id": input.id,
        "x-timestamp": String(t),
        "x-signature": `sha256=${mac("sha256", input.secret, `${t}.${body}`, "hex")}`,
      },
      body,
      eventId: input.id,
      type,
      version: String(input.sequence ?? t),
    };
  },
};
