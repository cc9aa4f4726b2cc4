// Recipe (d): keep a subscription's state with a version guard and a state machine.
//
// Stripe does not promise order: `customer.subscription.updated` (active) may arrive after the
// `…deleted` (canceled) that followed it. hookinbox orders by the ordering key (Stripe preset:
// `data.object.id`, the subscription) and, with `stale: "skip"` (the default), marks a delivery
// whose version (Stripe preset: the event's `created`) is older than the newest already applied
// as `stale` instead of running it. The state machine catches what ordering cannot: a transition
// that must never happen (canceled → active) throws IllegalTransitionError, which dead-letters the
// delivery for a human instead of being applied silently. The row keeps its own version too, so
// the write is guarded even when the handler runs with `stale: "deliver"`.
//
// Run it: STRIPE_WEBHOOK_SECRET=whsec_… npx hookinbox start --config examples/recipes/subscription.ts
import { defineConfig, type Handler, type HookinboxConfig, stateMachine } from "hookinbox";

/** A Stripe `customer.subscription.*` event, the fields this recipe reads. */
export interface SubscriptionEvent {
  readonly data: {
    readonly object: { readonly id: string; readonly customer: string; readonly status: Status };
  };
}

export type Status =
  | "incomplete"
  | "incomplete_expired"
  | "trialing"
  | "active"
  | "past_due"
  | "unpaid"
  | "paused"
  | "canceled";

/** Stripe's subscription lifecycle; `canceled` and `incomplete_expired` are final. */
export const subscriptionStatus = stateMachine<Status>({
  initial: "incomplete",
  transitions: {
    incomplete: ["active", "trialing", "incomplete_expired", "past_due", "canceled"],
    trialing: ["active", "past_due", "unpaid", "paused", "canceled"],
    active: ["past_due", "unpaid", "paused", "canceled"],
    past_due: ["active", "unpaid", "canceled"],
    unpaid: ["active", "canceled"],
    paused: ["active", "canceled"],
  },
});

/** Applies a subscription event: only forward in version, only along legal transitions. */
export const applySubscription: Handler<SubscriptionEvent> = async (event, ctx) => {
  const subscription = event.payload.data.object;
  await ctx.transaction(async (tx) => {
    await tx.sql`
      CREATE TABLE IF NOT EXISTS subscriptions (
        id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, status TEXT NOT NULL,
        version REAL NOT NULL, event_id TEXT NOT NULL)`;
    const current = (
      await tx.sql<{ status: Status; version: number }>`
        SELECT status, version FROM subscriptions WHERE id = ${subscription.id}`
    ).rows[0];
    const version = event.version ?? 0;
    if (current && current.version > version) return; // older than what we hold: nothing to do
    const status = subscriptionStatus.next(current?.status, subscription.status); // throws if illegal
    await tx.sql`
      INSERT INTO subscriptions (id, customer_id, status, version, event_id)
      VALUES (${subscription.id}, ${subscription.customer}, ${status}, ${version}, ${event.id})
      ON CONFLICT (id) DO UPDATE SET status = excluded.status, version = excluded.version,
        event_id = excluded.event_id
      WHERE excluded.version >= subscriptions.version`;
  });
};

/** The handlers of this recipe, to spread into a config. */
export const subscriptionHandlers = {
  "stripe:customer.subscription.*": {
    handler: applySubscription,
    // skip (the default) made explicit: an older event than the newest applied is not run.
    options: { stale: "skip" },
  },
} satisfies HookinboxConfig["handlers"];

export default defineConfig({
  store: "sqlite:./.hookinbox/hookinbox.db",
  sources: { stripe: { provider: "stripe", secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] } },
  handlers: subscriptionHandlers,
});
