/**
 * The provider registry: every provider a source may name, each one line. A provider is a file
 * in this folder exporting one definition (`defineProvider`, see definition.ts), or a preset
 * (one file in presets/, data only, listed in presets/index.ts); adding one is that file plus its
 * line here or in presets/index.ts.
 * The config schema, its error messages, `providerNames`, `schemeFor` and the source helpers
 * exported from `hookinbox` (`stripe({ secrets })`, …) are all derived from this module
 * (test/providers/registry.test.ts fails when a provider file is missing here).
 */

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
export * from "./presets/index.ts";
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
