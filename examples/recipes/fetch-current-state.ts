// Recipe (e): treat the webhook as a notification and fetch the current state before writing.
//
// A webhook body is a snapshot from when the event happened. When events about one object arrive
// late, twice or out of order, writing their snapshots can move the object back in time. This
// handler reads only the object's id from the event, asks the provider's API for the object as it
// is now, and writes that. Every delivery converges on the provider's current state, so an older
// notification is harmless: `stale: "deliver"` lets it refresh too, and the ordering key still
// keeps two fetch-and-writes of one object from interleaving.
//
// Run it: STRIPE_WEBHOOK_SECRET=whsec_… STRIPE_API_KEY=sk_… \
//   npx hookinbox start --config examples/recipes/fetch-current-state.ts
import { defineConfig, type Handler, type HookinboxConfig } from "hookinbox";

/** A Stripe `invoice.*` event: only the invoice id is used. */
export interface InvoiceEvent {
  readonly data: { readonly object: { readonly id: string } };
}

/** The invoice as the provider's API returns it now. */
export interface Invoice {
  readonly id: string;
  readonly status: string;
  readonly amount_due: number;
  readonly amount_paid: number;
}

/** What the recipe needs from the provider's API. */
export interface InvoiceApi {
  getInvoice(id: string, options: { signal: AbortSignal }): Promise<Invoice>;
}

/** Stripe's `GET /v1/invoices/:id` (any base URL, so tests can point it at a fake). */
export function stripeInvoiceApi(apiKey: string, baseUrl = "https://api.stripe.com"): InvoiceApi {
  return {
    async getInvoice(id, { signal }) {
      const response = await fetch(`${baseUrl}/v1/invoices/${encodeURIComponent(id)}`, {
        headers: { authorization: `Bearer ${apiKey}` },
        signal,
      });
      // A failure throws: the delivery is retried with backoff, nothing is written.
      if (!response.ok) throw new Error(`GET /v1/invoices/${id} answered ${response.status}`);
      return (await response.json()) as Invoice;
    },
  };
}

/** The invoice sync handler over an API client. */
export function invoiceSyncHandlers(api: InvoiceApi) {
  const syncInvoice: Handler<InvoiceEvent> = async (event, ctx) => {
    const invoice = await api.getInvoice(event.payload.data.object.id, { signal: ctx.signal });
    await ctx.transaction(async (tx) => {
      await tx.sql`
        CREATE TABLE IF NOT EXISTS invoices (
          id TEXT PRIMARY KEY, status TEXT NOT NULL, amount_due INTEGER NOT NULL,
          amount_paid INTEGER NOT NULL, synced_by_event TEXT NOT NULL)`;
      await tx.sql`
        INSERT INTO invoices (id, status, amount_due, amount_paid, synced_by_event)
        VALUES (${invoice.id}, ${invoice.status}, ${invoice.amount_due}, ${invoice.amount_paid},
                ${event.id})
        ON CONFLICT (id) DO UPDATE SET status = excluded.status, amount_due = excluded.amount_due,
          amount_paid = excluded.amount_paid, synced_by_event = excluded.synced_by_event`;
    });
  };
  return {
    "stripe:invoice.*": { handler: syncInvoice, options: { stale: "deliver" } },
  } satisfies HookinboxConfig["handlers"];
}

export default defineConfig({
  store: "sqlite:./.hookinbox/hookinbox.db",
  sources: { stripe: { provider: "stripe", secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] } },
  handlers: invoiceSyncHandlers(stripeInvoiceApi(process.env.STRIPE_API_KEY ?? "")),
});
