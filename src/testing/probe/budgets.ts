/**
 * How long each provider waits for a webhook's answer before it counts the delivery as failed
 * (and retries it, or after repeated failures disables the endpoint). `hookinbox probe` checks a
 * receiver's p99 answer time against this budget. Where the provider publishes no number, the
 * budget is a conservative choice, marked as such; `--budget` overrides it.
 */

/** One provider's answer-time budget and where it comes from. */
export interface AnswerBudget {
  readonly ms: number;
  readonly basis: string;
}

/** The answer-time budgets, one row per provider. */
export const answerBudgets: Readonly<Record<string, AnswerBudget>> = {
  slack: { ms: 3_000, basis: "Slack: answer Events API requests within 3 seconds" },
  discord: { ms: 3_000, basis: "Discord: an interaction must be answered within 3 seconds" },
  zoom: { ms: 3_000, basis: "Zoom: respond with 200/204 within 3 seconds" },
  twitch: { ms: 3_000, basis: "Twitch: respond 'within a few seconds' (chosen: 3 s)" },
  shopify: { ms: 5_000, basis: "Shopify: 5-second total timeout per delivery" },
  paddle: { ms: 5_000, basis: "Paddle: respond within 5 seconds" },
  linear: { ms: 5_000, basis: "Linear: respond within 5 seconds" },
  intercom: { ms: 5_000, basis: "Intercom: respond within 5 seconds" },
  hubspot: { ms: 5_000, basis: "HubSpot app webhooks: conservative choice (workflows wait 30 s)" },
  github: { ms: 10_000, basis: "GitHub: a delivery not answered within 10 seconds fails" },
  gitlab: { ms: 10_000, basis: "GitLab: default webhook timeout 10 seconds" },
  square: { ms: 10_000, basis: "Square: respond within 10 seconds" },
  adyen: { ms: 10_000, basis: "Adyen: respond within 10 seconds" },
  stripe: { ms: 10_000, basis: "Stripe: 'return 2xx quickly', no number published (chosen: 10 s)" },
  hmac: { ms: 10_000, basis: "generic HMAC sender: chosen 10 s; set --budget to the sender's" },
  "standard-webhooks": {
    ms: 15_000,
    basis: "Standard Webhooks: senders time out after 15-30 s (chosen: the lower)",
  },
  twilio: { ms: 15_000, basis: "Twilio: 15-second default request timeout" },
  mercadopago: { ms: 22_000, basis: "Mercado Pago: 22-second timeout" },
};

/** The budget for providers not in the table. */
export const defaultAnswerBudget: AnswerBudget = {
  ms: 10_000,
  basis: "no provider figure: chosen 10 s; set --budget",
};

/**
 * The answer-time budget of a provider.
 *
 * @example
 * ```ts
 * answerBudget("slack").ms; // 3000
 * ```
 */
export function answerBudget(provider: string): AnswerBudget {
  return answerBudgets[provider] ?? defaultAnswerBudget;
}
