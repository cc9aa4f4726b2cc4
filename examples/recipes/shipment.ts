// Recipe (c): create a shipment behind `onStale: "hold"`, with `ctx.idempotencyKey` passed to
// the carrier.
//
// Goods, like money, must not go out twice on a guess. If the worker dies after asking the
// carrier and before recording the answer, `hold` parks the effect for a human (an alert fires,
// the delivery is dead-lettered, `hookinbox stuck` lists it) instead of calling the carrier
// again. Because every call carries the same idempotency key, the human's usual answer is easy:
// `hookinbox effects resolve <id> --release` then `hookinbox dlq retry <delivery>`; the carrier
// sees the key again and answers with the shipment it already made.
//
// Run it: STRIPE_WEBHOOK_SECRET=whsec_… npx hookinbox start --config examples/recipes/shipment.ts
// (set CARRIER_API_URL and CARRIER_API_KEY to call a carrier; without them it prints instead)
import { defineConfig, type Handler, type HookinboxConfig } from "hookinbox";

/** A Stripe `checkout.session.completed` event, the fields this recipe reads. */
export interface CheckoutCompletedEvent {
  readonly data: {
    readonly object: {
      readonly id: string;
      readonly metadata: { readonly order_id: string };
      readonly shipping_details: { readonly name: string; readonly address: unknown } | null;
    };
  };
}

/** What the recipe needs from a carrier. */
export interface Carrier {
  createShipment(request: {
    orderId: string;
    recipient: unknown;
    idempotencyKey: string;
  }): Promise<{ shipmentId: string }>;
}

/** A carrier over a JSON HTTP API that deduplicates on an `Idempotency-Key` header. */
export function httpCarrier(url: string, apiKey: string): Carrier {
  return {
    async createShipment({ idempotencyKey, ...request }) {
      const response = await fetch(`${url}/shipments`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${apiKey}`,
          "content-type": "application/json",
          "idempotency-key": idempotencyKey,
        },
        body: JSON.stringify(request),
      });
      if (!response.ok) throw new Error(`carrier answered ${response.status}`);
      return (await response.json()) as { shipmentId: string };
    },
  };
}

/** Without a carrier configured: print what would be shipped (to try the recipe locally). */
export const printingCarrier: Carrier = {
  async createShipment(request) {
    console.error(`would ship order ${request.orderId} (key ${request.idempotencyKey})`);
    return { shipmentId: `printed-${request.idempotencyKey}` };
  },
};

/** The shipping handler over a carrier; `staleAfter` must exceed the carrier's p99. */
export function shipmentHandlers(carrier: Carrier, options: { staleAfter?: string } = {}) {
  const ship: Handler<CheckoutCompletedEvent> = async (event, ctx) => {
    const session = event.payload.data.object;
    const orderId = session.metadata.order_id;
    const shipment = await ctx.effect(
      "create-shipment",
      () =>
        carrier.createShipment({
          orderId,
          recipient: session.shipping_details,
          idempotencyKey: ctx.idempotencyKey("create-shipment"),
        }),
      { onStale: "hold", staleAfter: options.staleAfter ?? "10m" },
    );
    await ctx.transaction(async (tx) => {
      await tx.sql`
        CREATE TABLE IF NOT EXISTS shipments (order_id TEXT PRIMARY KEY, shipment_id TEXT NOT NULL)`;
      await tx.sql`
        INSERT INTO shipments (order_id, shipment_id) VALUES (${orderId}, ${shipment.shipmentId})
        ON CONFLICT (order_id) DO NOTHING`;
    });
  };
  return { "stripe:checkout.session.completed": ship } satisfies HookinboxConfig["handlers"];
}

export default defineConfig({
  store: "sqlite:./.hookinbox/hookinbox.db",
  sources: { stripe: { provider: "stripe", secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] } },
  handlers: shipmentHandlers(
    process.env.CARRIER_API_URL
      ? httpCarrier(process.env.CARRIER_API_URL, process.env.CARRIER_API_KEY ?? "")
      : printingCarrier,
  ),
  alerts: {
    onEffectHeld: (alert) => console.error("a shipment needs a human:", alert),
  },
});
