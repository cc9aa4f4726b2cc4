/**
 * `hookinbox/providers`: the verifiers alone. Each scheme verifies a request on its raw bytes and
 * names where the event's identity lives (`scheme.identity`); see types.ts for the contract.
 * Schemes and their option types only: helpers used to build them stay internal.
 *
 * @example
 * ```ts
 * import { stripeScheme } from "hookinbox/providers";
 * const scheme = stripeScheme({ toleranceMs: 300_000 });
 * const { secretIndex } = scheme.verifier.verify(request, [{ index: 0, value: "whsec_…" }], Date.now());
 * ```
 */

export { type AdyenOptions, adyenScheme } from "./adyen.ts";
export { type AsanaOptions, asanaScheme } from "./asana.ts";
export { type DiscordOptions, discordScheme } from "./discord.ts";
export { dropboxScheme } from "./dropbox.ts";
export { type GithubOptions, githubScheme } from "./github.ts";
export { type GitlabOptions, gitlabScheme } from "./gitlab.ts";
export { type HmacOptions, hmacScheme } from "./hmac.ts";
export { type HubspotOptions, hubspotScheme } from "./hubspot.ts";
export { type IntercomOptions, intercomScheme } from "./intercom.ts";
export type {
  KeyFetcher,
  KeyFetchOptions,
  KeyFetchRequest,
  KeyFetchResponse,
} from "./keys/index.ts";
export { type LinearOptions, linearScheme } from "./linear.ts";
export { type MailgunOptions, mailgunScheme } from "./mailgun.ts";
export { type MercadoPagoOptions, mercadoPagoScheme } from "./mercadopago.ts";
export { type MetaOptions, metaScheme } from "./meta.ts";
export { mollieScheme } from "./mollie.ts";
export { msgraphScheme } from "./msgraph.ts";
export { type OktaOptions, oktaScheme } from "./okta.ts";
export { type PaddleOptions, paddleScheme } from "./paddle.ts";
export { type PaypalOptions, paypalScheme } from "./paypal.ts";
export { type PlaidEnvironment, type PlaidOptions, plaidScheme } from "./plaid.ts";
export { type PresetName, presetScheme } from "./presets.ts";
export { type PubsubMessage, type PubsubOptions, pubsubMessage, pubsubScheme } from "./pubsub.ts";
export { type SendgridOptions, sendgridScheme } from "./sendgrid.ts";
export { type ShopifyOptions, shopifyScheme } from "./shopify.ts";
export { type SlackOptions, slackScheme } from "./slack.ts";
export { type SnsMessage, type SnsOptions, snsScheme } from "./sns.ts";
export { type SquareOptions, squareScheme } from "./square.ts";
export { type StandardWebhooksOptions, standardWebhooksScheme } from "./standard-webhooks.ts";
export { type StripeOptions, stripeScheme } from "./stripe.ts";
export { type TwilioOptions, twilioScheme } from "./twilio.ts";
export { type TwitchOptions, twitchScheme } from "./twitch.ts";
export type * from "./types.ts";
export { type ZoomOptions, zoomScheme } from "./zoom.ts";
