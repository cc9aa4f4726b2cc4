// Payload: an `Issue` `update` webhook as in Linear's webhook docs
// (linear.app/developers/webhooks, "Data change events payload"), trimmed.
import { randomUUID } from "node:crypto";
import { mac } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

/**
 * Linear: `Linear-Signature: <hex HMAC-SHA256 of the body>`; the body's `webhookTimestamp`
 * (ms) is the signed time (60 s window); the delivery id is `Linear-Delivery`.
 *
 * @example
 * ```ts
 * linearSample.build({ secret: "lin_wh_…", url, nowMs: Date.now(), id: linearSample.newId() });
 * ```
 */
export const linearSample: ProviderSample = {
  provider: "linear",
  origin: "linear.app webhook docs: data change event payload (Issue update), trimmed",
  defaultType: "Issue.update",
  unhandledType: "Reaction.create",
  exampleSecret: "lin_wh_hookinbox_example_signing_secret",
  traits: () => ({ signs: "body", timestampWindowMs: 60_000, bodyFormat: "json" }),
  newId: () => randomUUID(),
  build(input) {
    const type = input.type ?? this.defaultType;
    const dot = type.indexOf(".");
    const entity = dot < 0 ? type : type.slice(0, dot);
    const action = dot < 0 ? "update" : type.slice(dot + 1);
    const updatedAt = new Date(
      input.sequence === undefined ? input.nowMs : input.sequence * 1000,
    ).toISOString();
    const body =
      input.body ??
      JSON.stringify({
        action,
        type: entity,
        createdAt: updatedAt,
        data: {
          id: input.resource ?? "2174add1-f7c8-44e3-bbf3-2d60b5ea8bc9",
          identifier: "ENG-42",
          title: "Webhook receivers must dedupe",
          priority: 2,
          stateId: "8a6bd2a8-2a9b-4a09-8c1b-0e2a1b0b0f7e",
          updatedAt,
        },
        url: "https://linear.app/example/issue/ENG-42",
        organizationId: "a2f1c7c6-0a43-4f2b-9b5e-6c3c3b1f0d11",
        webhookTimestamp: input.nowMs,
        webhookId: "000042e3-d123-4980-b49f-8e140eef9329",
      });
    return {
      url: input.url,
      headers: {
        "content-type": "application/json; charset=utf-8",
        "user-agent": "Linear-Webhook",
        "linear-delivery": input.id,
        "linear-event": entity,
        "linear-signature": mac("sha256", input.secret, body, "hex"),
      },
      body,
      eventId: input.id,
      type,
      version: updatedAt,
    };
  },
};
