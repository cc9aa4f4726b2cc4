// Independent signers: the providers' official npm packages, never hookinbox's own code.
import { sign as githubSign } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";

const stripeClient = new Stripe("sk_test_hookinbox");

export const secrets = {
  stripe: "whsec_test_hookinbox_stripe_secret",
  github: "github-hookinbox-secret",
  standard: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
} as const;

/** A Stripe event body and its `Stripe-Signature`, signed by the `stripe` package. */
export function stripeRequest(
  id: string,
  options: {
    type?: string;
    secret?: string;
    timestamp?: number;
    extra?: Record<string, unknown>;
  } = {},
): { body: string; headers: Record<string, string> } {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const body = JSON.stringify({
    id,
    object: "event",
    type: options.type ?? "invoice.paid",
    created: timestamp,
    data: { object: { id: "in_1", customer: "cus_1" } },
    ...options.extra,
  });
  const signature = stripeClient.webhooks.generateTestHeaderString({
    payload: body,
    secret: options.secret ?? secrets.stripe,
    timestamp,
  });
  return { body, headers: { "content-type": "application/json", "stripe-signature": signature } };
}

/** A GitHub delivery signed by `@octokit/webhooks-methods`. */
export async function githubRequest(
  delivery: string,
  body: string,
  event = "push",
): Promise<{ body: string; headers: Record<string, string> }> {
  const signature = await githubSign(secrets.github, body);
  return {
    body,
    headers: {
      "content-type": "application/json",
      "x-github-delivery": delivery,
      "x-github-event": event,
      "x-hub-signature-256": signature,
    },
  };
}

/** A Standard Webhooks message signed by the `standardwebhooks` package. */
export function standardRequest(
  id: string,
  body: string,
  date = new Date(),
): { body: string; headers: Record<string, string> } {
  const signature = new Webhook(secrets.standard).sign(id, date, body);
  return {
    body,
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(date.getTime() / 1000)),
      "webhook-signature": signature,
    },
  };
}

/** The config sources matching the secrets above. */
export const testSources = {
  stripe: { provider: "stripe", secrets: [secrets.stripe] },
  github: { provider: "github", secrets: [secrets.github] },
  standard: { provider: "standard-webhooks", secrets: [secrets.standard] },
} as const;
