/**
 * The provider registry: every provider a source may name, each one line. A provider is a file
 * in this folder exporting one definition (`defineProvider`, see definition.ts), or a preset
 * (an entry of presets.ts, data only); adding one is that file or entry plus its line here.
 * The config schema, its error messages, `providerNames`, `schemeFor` and the source helpers
 * exported from `hookinbox` (`stripe({ secrets })`, …) are all derived from this module
 * (test/providers/registry.test.ts fails when a provider file is missing here).
 */

import { presetProvider } from "./presets.ts";

export { adyen } from "./adyen.ts";
export { asana } from "./asana.ts";
export { discord } from "./discord.ts";
export { dropbox } from "./dropbox.ts";
export { github } from "./github.ts";
export { gitlab } from "./gitlab.ts";
export { hmac } from "./hmac.ts";
export { hubspot } from "./hubspot.ts";
export { intercom } from "./intercom.ts";
export { linear } from "./linear.ts";
export { mailgun } from "./mailgun.ts";
export { mercadopago } from "./mercadopago.ts";
export { meta } from "./meta.ts";
export { mollie } from "./mollie.ts";
export { msgraph } from "./msgraph.ts";
export { okta } from "./okta.ts";
export { paddle } from "./paddle.ts";
export { paypal } from "./paypal.ts";
export { plaid } from "./plaid.ts";
export { pubsub } from "./pubsub.ts";
export { sendgrid } from "./sendgrid.ts";
export { shopify } from "./shopify.ts";
export { slack } from "./slack.ts";
export { sns } from "./sns.ts";
export { square } from "./square.ts";
export { standardWebhooks } from "./standard-webhooks.ts";
export { stripe } from "./stripe.ts";
export { twilio } from "./twilio.ts";
export { twitch } from "./twitch.ts";
export { zoom } from "./zoom.ts";

/** A Clerk source (Svix headers, `whsec_` secret). @example `clerk({ secrets: [{ env: "CLERK_WEBHOOK_SECRET" }] })` */
export const clerk = presetProvider("clerk");
/** A Resend source (Svix headers, `whsec_` secret). @example `resend({ secrets: [{ env: "RESEND_WEBHOOK_SECRET" }] })` */
export const resend = presetProvider("resend");
/** A WorkOS source (`WorkOS-Signature`, 180 s window). @example `workos({ secrets: [{ env: "WORKOS_WEBHOOK_SECRET" }] })` */
export const workos = presetProvider("workos");
/** A Vercel source (`x-vercel-signature`, HMAC-SHA1). @example `vercel({ secrets: [{ env: "VERCEL_WEBHOOK_SECRET" }] })` */
export const vercel = presetProvider("vercel");
/** A Sentry integration source (`Sentry-Hook-Signature`). @example `sentry({ secrets: [{ env: "SENTRY_CLIENT_SECRET" }] })` */
export const sentry = presetProvider("sentry");
/** A Bitbucket source (`X-Hub-Signature: sha256=`). @example `bitbucket({ secrets: [{ env: "BITBUCKET_SECRET" }] })` */
export const bitbucket = presetProvider("bitbucket");
/** A Jira (Atlassian) source (`X-Hub-Signature: sha256=`). @example `jira({ secrets: [{ env: "JIRA_WEBHOOK_SECRET" }] })` */
export const jira = presetProvider("jira");
/** A Typeform source (`Typeform-Signature: sha256=<base64>`). @example `typeform({ secrets: [{ env: "TYPEFORM_SECRET" }] })` */
export const typeform = presetProvider("typeform");
/** A Calendly source (`Calendly-Webhook-Signature`, 3 min window). @example `calendly({ secrets: [{ env: "CALENDLY_SIGNING_KEY" }] })` */
export const calendly = presetProvider("calendly");
/** A Lemon Squeezy source (`X-Signature`). @example `lemonsqueezy({ secrets: [{ env: "LEMONSQUEEZY_SECRET" }] })` */
export const lemonsqueezy = presetProvider("lemonsqueezy");
/** A Razorpay source (`X-Razorpay-Signature`). @example `razorpay({ secrets: [{ env: "RAZORPAY_WEBHOOK_SECRET" }] })` */
export const razorpay = presetProvider("razorpay");
/** A Coinbase Commerce source (`X-CC-Webhook-Signature`). @example `coinbase({ secrets: [{ env: "COINBASE_COMMERCE_SECRET" }] })` */
export const coinbase = presetProvider("coinbase");
/** A Zendesk source (`X-Zendesk-Webhook-Signature`). @example `zendesk({ secrets: [{ env: "ZENDESK_SIGNING_SECRET" }] })` */
export const zendesk = presetProvider("zendesk");
/** A Telegram bot source (`X-Telegram-Bot-Api-Secret-Token`). @example `telegram({ secrets: [{ env: "TELEGRAM_SECRET_TOKEN" }] })` */
export const telegram = presetProvider("telegram");
/** A Postmark source (basic auth from the webhook URL). @example `postmark({ secrets: [{ env: "POSTMARK_WEBHOOK_AUTH" }] })` */
export const postmark = presetProvider("postmark");
