// Payload: a `payment.updated` notification as in Mercado Pago's webhook docs
// (mercadopago.com/developers/en/docs/your-integrations/notifications/webhooks), with the
// `data.id` and `type` query parameters Mercado Pago adds to the notification URL.
import { randomUUID } from "node:crypto";
import { digits, mac, seconds } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

/**
 * Mercado Pago: `x-signature: ts=<s>,v1=<hex HMAC-SHA256 of "id:{data.id};request-id:{x-request-id};ts:{ts};">`
 * with `x-request-id`; `data.id` comes from the URL's query. The body itself is not signed.
 * The dedup key is the body's `id`.
 *
 * @example
 * ```ts
 * mercadoPagoSample.build({ secret: "s", url, nowMs: Date.now(), id: "12345" }).url; // "…?data.id=…&type=payment"
 * ```
 */
export const mercadoPagoSample: ProviderSample = {
  provider: "mercadopago",
  origin: "mercadopago.com developers docs: webhook notification for payment.updated",
  defaultType: "payment.updated",
  unhandledType: "mp-connect.application.deauthorized",
  exampleSecret: "hookinbox-example-mercadopago-secret",
  traits: () => ({ signs: "nothing", bodyFormat: "json" }),
  newId: () => digits(String(Math.random()), 11),
  build(input) {
    const type = input.type ?? this.defaultType;
    const dataId = input.resource ?? digits(`${input.id}:data`, 10);
    const parsedId = Number(input.id);
    const body =
      input.body ??
      JSON.stringify({
        action: type,
        api_version: "v1",
        data: { id: dataId },
        date_created: new Date(
          input.sequence === undefined ? input.nowMs : input.sequence * 1000,
        ).toISOString(),
        id: Number.isSafeInteger(parsedId) ? parsedId : input.id,
        live_mode: false,
        type: type.split(".")[0],
        user_id: "44444",
      });
    const ts = String(seconds(input.nowMs));
    const requestId = randomUUID();
    const target = new URL(input.url);
    target.searchParams.set("data.id", dataId);
    target.searchParams.set("type", type.split(".")[0] ?? type);
    const manifest = `id:${dataId.toLowerCase()};request-id:${requestId};ts:${ts};`;
    return {
      url: target.toString(),
      headers: {
        "content-type": "application/json",
        "x-request-id": requestId,
        "x-signature": `ts=${ts},v1=${mac("sha256", input.secret, manifest, "hex")}`,
      },
      body,
      eventId: input.body === undefined ? input.id : undefined,
      type,
    };
  },
};
