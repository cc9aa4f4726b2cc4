// Recipe (a): credit a payment under a unique key per order, never `balance += amount`.
//
// Webhooks arrive more than once (provider retries, replays, a second event type about the same
// payment). An increment applied once per delivery counts the money once per delivery. Instead,
// insert one credit row per order under a unique key, in the transaction that completes the
// delivery, and derive the balance from the rows: a repeat changes nothing.
//
// Run it: STRIPE_WEBHOOK_SECRET=whsec_… npx hookinbox start --config examples/recipes/payment-credit.ts
import { defineConfig, type Handler, type HookinboxConfig } from "hookinbox";

/** The part of a Stripe `payment_intent.succeeded` event this recipe reads. */
export interface PaymentIntentEvent {
  readonly data: {
    readonly object: {
      readonly id: string;
      readonly amount_received: number;
      readonly currency: string;
      readonly customer: string | null;
      readonly metadata: { readonly order_id?: string };
    };
  };
}

/** Credits the order's payment once, whatever number of times the event is delivered. */
export const creditPayment: Handler<PaymentIntentEvent> = async (event, ctx) => {
  const intent = event.payload.data.object;
  const orderId = intent.metadata.order_id ?? intent.id;
  await ctx.transaction(async (tx) => {
    // Your own tables live in the store's database, so they commit with the delivery. (Creating
    // them here keeps the recipe self-contained; a migration of your own does it once.)
    await tx.sql`
      CREATE TABLE IF NOT EXISTS credits (
        order_id   TEXT PRIMARY KEY,          -- the unique key: one credit per order
        account_id TEXT NOT NULL,
        amount     INTEGER NOT NULL,          -- minor units (cents)
        currency   TEXT NOT NULL,
        event_id   TEXT NOT NULL              -- which event credited it, for the audit trail
      )`;
    await tx.sql`
      CREATE VIEW IF NOT EXISTS balances AS
        SELECT account_id, currency, sum(amount) AS balance FROM credits GROUP BY account_id, currency`;
    // tx.sql sends each ${value} as a parameter, never as SQL text, with the store's own
    // placeholders: the same handler runs on SQLite and PostgreSQL.
    await tx.sql`
      INSERT INTO credits (order_id, account_id, amount, currency, event_id)
      VALUES (${orderId}, ${intent.customer ?? "guest"}, ${intent.amount_received},
              ${intent.currency}, ${event.id})
      ON CONFLICT (order_id) DO NOTHING`;
  });
};

/** The handlers of this recipe, to spread into a config. */
export const paymentHandlers = {
  "stripe:payment_intent.succeeded": creditPayment,
} satisfies HookinboxConfig["handlers"];

export default defineConfig({
  store: "sqlite:./.hookinbox/hookinbox.db",
  sources: { stripe: { provider: "stripe", secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] } },
  handlers: paymentHandlers,
});
