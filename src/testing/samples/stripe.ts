// Shape: Stripe's Event and Subscription objects as in the API fixtures of stripe/openapi
// (openapi/fixtures3.json, "event" and "subscription"), trimmed to the fields receivers read.
import { mac, randomToken, seconds } from "./sign.ts";
import type { ProviderSample, SampleInput } from "./types.ts";

function subscription(input: SampleInput, created: number) {
  return {
    id: input.resource ?? "sub_1MowQVLkdIwHu7ixeRlqHVzs",
    object: "subscription",
    billing_cycle_anchor: 1679609767,
    cancel_at_period_end: false,
    currency: "usd",
    current_period_end: 1682288167,
    current_period_start: 1679609767,
    customer: "cus_Na6dX7aXxi11N4",
    items: {
      object: "list",
      data: [
        {
          id: "si_Na6dzxczY5fwHx",
          object: "subscription_item",
          price: { id: "price_1MowQULkdIwHu7ixraBm864M", unit_amount: 1000, currency: "usd" },
          quantity: 1,
        },
      ],
    },
    latest_invoice: "in_1MowQWLkdIwHu7ixuzkSPfKd",
    livemode: false,
    start_date: 1679609767,
    status: "active",
    created,
  };
}

/**
 * Stripe: `Stripe-Signature: t=<s>,v1=<hex HMAC-SHA256 of "{t}.{body}">`, keyed with the whole
 * `whsec_…` string. `created` (the event's) is the version hookinbox's preset reads.
 *
 * @example
 * ```ts
 * stripeSample.build({ secret: "whsec_x", url, nowMs: Date.now(), id: "evt_1" }).headers["stripe-signature"];
 * ```
 */
export const stripeSample: ProviderSample = {
  provider: "stripe",
  origin: "stripe/openapi fixtures3.json (event, subscription), trimmed",
  defaultType: "customer.subscription.updated",
  unhandledType: "test_helpers.test_clock.ready",
  exampleSecret: "whsec_hookinbox_example_stripe_secret",
  traits: () => ({ signs: "body", timestampWindowMs: 300_000, bodyFormat: "json" }),
  newId: () => `evt_1${randomToken(23)}`,
  build(input) {
    const t = seconds(input.nowMs);
    const created = input.sequence ?? t;
    const type = input.type ?? this.defaultType;
    const body =
      input.body ??
      JSON.stringify({
        id: input.id,
        object: "event",
        api_version: "2024-06-20",
        created,
        data: { object: subscription(input, created) },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
      });
    const v1 = mac("sha256", input.secret, `${t}.${body}`, "hex");
    return {
      url: input.url,
      headers: {
        "content-type": "application/json; charset=utf-8",
        "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
        "stripe-signature": `t=${t},v1=${v1}`,
      },
      body,
      eventId: input.body === undefined ? input.id : undefined,
      type,
      version: String(created),
    };
  },
};
