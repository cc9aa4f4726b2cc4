import type { PresetName } from "../providers/presets.ts";
import type { HookinboxConfig, SourceConfig } from "./schema.ts";

/**
 * Types a config object. It returns its argument unchanged: a config is a plain object.
 *
 * @example
 * ```ts
 * export default defineConfig({
 *   sources: { stripe: { provider: "stripe", secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] } },
 * });
 * ```
 */
export function defineConfig(config: HookinboxConfig): HookinboxConfig {
  return config;
}

type Options<P extends SourceConfig["provider"]> = Omit<
  Extract<SourceConfig, { provider: P }>,
  "provider"
>;

/**
 * A Stripe source (`Stripe-Signature`, id from the body's `id`). Sugar for `{ provider: "stripe", … }`.
 *
 * @example
 * ```ts
 * sources: { stripe: stripe({ secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }], tolerance: "5m" }) }
 * ```
 */
export function stripe(options: Options<"stripe">): SourceConfig {
  return { provider: "stripe", ...options };
}

/**
 * A GitHub source (`X-Hub-Signature-256`, id from `X-GitHub-Delivery`).
 *
 * @example
 * ```ts
 * sources: { github: github({ secrets: [{ env: "GITHUB_WEBHOOK_SECRET" }] }) }
 * ```
 */
export function github(options: Options<"github">): SourceConfig {
  return { provider: "github", ...options };
}

/**
 * A Standard Webhooks source (`webhook-*` or `svix-*` headers, `whsec_` secrets).
 *
 * @example
 * ```ts
 * sources: { clerk: standardWebhooks({ secrets: [{ env: "CLERK_WEBHOOK_SECRET" }] }) }
 * ```
 */
export function standardWebhooks(options: Options<"standard-webhooks">): SourceConfig {
  return { provider: "standard-webhooks", ...options };
}

/**
 * A generic HMAC source for senders with their own scheme.
 *
 * @example
 * ```ts
 * sources: { crm: hmac({ header: "x-signature", secrets: ["s"], identity: { id: "$.eventId" } }) }
 * ```
 */
export function hmac(options: Options<"hmac">): SourceConfig {
  return { provider: "hmac", ...options };
}

type Factory<P extends SourceConfig["provider"]> = (options: Options<P>) => SourceConfig;
const factory =
  <P extends SourceConfig["provider"]>(provider: P): Factory<P> =>
  (options) =>
    ({ provider, ...options }) as unknown as SourceConfig;

/** A Shopify source (`X-Shopify-Hmac-Sha256`, id `X-Shopify-Webhook-Id`). @example `shopify({ secrets: [{ env: "SHOPIFY_SECRET" }] })` */
export const shopify: Factory<"shopify"> = factory("shopify");
/** A Slack source (`X-Slack-Signature`, answers `url_verification`). @example `slack({ secrets: [{ env: "SLACK_SIGNING_SECRET" }] })` */
export const slack: Factory<"slack"> = factory("slack");
/** A Twilio source (signs the public URL). @example `twilio({ secrets: [{ env: "TWILIO_AUTH_TOKEN" }], publicUrl: "https://hooks.example.com" })` */
export const twilio: Factory<"twilio"> = factory("twilio");
/** A HubSpot source (v3, v1/v2; batches split per item). @example `hubspot({ secrets: [{ env: "HUBSPOT_CLIENT_SECRET" }] })` */
export const hubspot: Factory<"hubspot"> = factory("hubspot");
/** A Paddle Billing source (`Paddle-Signature`). @example `paddle({ secrets: [{ env: "PADDLE_SECRET" }] })` */
export const paddle: Factory<"paddle"> = factory("paddle");
/** A Square source (signs the notification URL). @example `square({ secrets: [{ env: "SQUARE_KEY" }], notificationUrl: "https://hooks.example.com/webhooks/square" })` */
export const square: Factory<"square"> = factory("square");
/** A Zoom source (answers `endpoint.url_validation`). @example `zoom({ secrets: [{ env: "ZOOM_SECRET" }] })` */
export const zoom: Factory<"zoom"> = factory("zoom");
/** A Linear source (`Linear-Signature`). @example `linear({ secrets: [{ env: "LINEAR_SECRET" }] })` */
export const linear: Factory<"linear"> = factory("linear");
/** A Discord interactions source (Ed25519 public key; answers PING; 401 on bad signatures). @example `discord({ secrets: ["<public key hex>"] })` */
export const discord: Factory<"discord"> = factory("discord");
/** A GitLab source (`X-Gitlab-Token`, or signing tokens). @example `gitlab({ secrets: [{ env: "GITLAB_TOKEN" }] })` */
export const gitlab: Factory<"gitlab"> = factory("gitlab");
/** An Intercom source (`X-Hub-Signature` sha1). @example `intercom({ secrets: [{ env: "INTERCOM_SECRET" }] })` */
export const intercom: Factory<"intercom"> = factory("intercom");
/** A Twitch EventSub source (answers the callback verification). @example `twitch({ secrets: [{ env: "TWITCH_SECRET" }] })` */
export const twitch: Factory<"twitch"> = factory("twitch");
/** An Adyen source (HMAC per notification item; replies `[accepted]`). @example `adyen({ secrets: [{ env: "ADYEN_HMAC_KEY" }] })` */
export const adyen: Factory<"adyen"> = factory("adyen");
/** A Mercado Pago source (`x-signature`). @example `mercadopago({ secrets: [{ env: "MP_SECRET" }] })` */
export const mercadopago: Factory<"mercadopago"> = factory("mercadopago");
/** A SendGrid Event Webhook source (ECDSA verification key; batches split per `sg_event_id`). @example `sendgrid({ secrets: [{ env: "SENDGRID_VERIFICATION_KEY" }] })` */
export const sendgrid: Factory<"sendgrid"> = factory("sendgrid");
/** An Amazon SNS source (AWS-signed messages for the named topics). @example `sns({ topicArns: ["arn:aws:sns:eu-west-1:123456789012:orders"] })` */
export const sns: Factory<"sns"> = factory("sns");

type PresetOptions = Omit<Extract<SourceConfig, { provider: PresetName }>, "provider">;
type PresetFactory = (options: PresetOptions) => SourceConfig;
const preset =
  (provider: PresetName): PresetFactory =>
  (options) =>
    ({ provider, ...options }) as SourceConfig;

/** A Clerk source (Svix headers, `whsec_` secret). @example `clerk({ secrets: [{ env: "CLERK_WEBHOOK_SECRET" }] })` */
export const clerk: PresetFactory = preset("clerk");
/** A Resend source (Svix headers, `whsec_` secret). @example `resend({ secrets: [{ env: "RESEND_WEBHOOK_SECRET" }] })` */
export const resend: PresetFactory = preset("resend");
/** A WorkOS source (`WorkOS-Signature`, 180 s window). @example `workos({ secrets: [{ env: "WORKOS_WEBHOOK_SECRET" }] })` */
export const workos: PresetFactory = preset("workos");
/** A Vercel source (`x-vercel-signature`, HMAC-SHA1). @example `vercel({ secrets: [{ env: "VERCEL_WEBHOOK_SECRET" }] })` */
export const vercel: PresetFactory = preset("vercel");
/** A Sentry integration source (`Sentry-Hook-Signature`). @example `sentry({ secrets: [{ env: "SENTRY_CLIENT_SECRET" }] })` */
export const sentry: PresetFactory = preset("sentry");
/** A Bitbucket source (`X-Hub-Signature: sha256=`). @example `bitbucket({ secrets: [{ env: "BITBUCKET_SECRET" }] })` */
export const bitbucket: PresetFactory = preset("bitbucket");
/** A Jira (Atlassian) source (`X-Hub-Signature: sha256=`). @example `jira({ secrets: [{ env: "JIRA_WEBHOOK_SECRET" }] })` */
export const jira: PresetFactory = preset("jira");
/** A Typeform source (`Typeform-Signature: sha256=<base64>`). @example `typeform({ secrets: [{ env: "TYPEFORM_SECRET" }] })` */
export const typeform: PresetFactory = preset("typeform");
/** A Calendly source (`Calendly-Webhook-Signature`, 3 min window). @example `calendly({ secrets: [{ env: "CALENDLY_SIGNING_KEY" }] })` */
export const calendly: PresetFactory = preset("calendly");
/** A Lemon Squeezy source (`X-Signature`). @example `lemonsqueezy({ secrets: [{ env: "LEMONSQUEEZY_SECRET" }] })` */
export const lemonsqueezy: PresetFactory = preset("lemonsqueezy");
/** A Razorpay source (`X-Razorpay-Signature`). @example `razorpay({ secrets: [{ env: "RAZORPAY_WEBHOOK_SECRET" }] })` */
export const razorpay: PresetFactory = preset("razorpay");
/** A Coinbase Commerce source (`X-CC-Webhook-Signature`). @example `coinbase({ secrets: [{ env: "COINBASE_COMMERCE_SECRET" }] })` */
export const coinbase: PresetFactory = preset("coinbase");
/** A Zendesk source (`X-Zendesk-Webhook-Signature`). @example `zendesk({ secrets: [{ env: "ZENDESK_SIGNING_SECRET" }] })` */
export const zendesk: PresetFactory = preset("zendesk");
/** A Google Cloud Pub/Sub push source (OIDC token from the subscription's service account). @example `pubsub({ serviceAccountEmails: ["push@my-project.iam.gserviceaccount.com"] })` */
export const pubsub: Factory<"pubsub"> = factory("pubsub");
/** A Plaid source (ES256 `Plaid-Verification`; keys fetched with the API secret). @example `plaid({ clientId: "5f…", secrets: [{ env: "PLAID_SECRET" }] })` */
export const plaid: Factory<"plaid"> = factory("plaid");
/** A PayPal source (certificate-signed transmissions for the named webhook). @example `paypal({ webhookIds: ["1JE4291016473214C"] })` */
export const paypal: Factory<"paypal"> = factory("paypal");

/** A Meta source (WhatsApp, Messenger, Instagram: `X-Hub-Signature-256`, GET verify-token handshake). @example `meta({ secrets: [{ env: "META_APP_SECRET" }], verifyTokens: [{ env: "META_VERIFY_TOKEN" }] })` */
export const meta: Factory<"meta"> = factory("meta");
/** A Dropbox source (`X-Dropbox-Signature`, GET challenge). @example `dropbox({ secrets: [{ env: "DROPBOX_APP_SECRET" }] })` */
export const dropbox: Factory<"dropbox"> = factory("dropbox");
/** An Okta event hook source (authorization header, GET verification; batches split). @example `okta({ secrets: [{ env: "OKTA_HOOK_AUTH" }] })` */
export const okta: Factory<"okta"> = factory("okta");
/** A Microsoft Graph change-notification source (`clientState`, validationToken echo). @example `msgraph({ secrets: [{ env: "GRAPH_CLIENT_STATE" }] })` */
export const msgraph: Factory<"msgraph"> = factory("msgraph");
/** An Asana source (`X-Hook-Signature`; `X-Hook-Secret` handshake while `acceptHandshake`). @example `asana({ secrets: [{ env: "ASANA_HOOK_SECRET" }] })` */
export const asana: Factory<"asana"> = factory("asana");
/** A Telegram bot source (`X-Telegram-Bot-Api-Secret-Token`). @example `telegram({ secrets: [{ env: "TELEGRAM_SECRET_TOKEN" }] })` */
export const telegram: PresetFactory = preset("telegram");
/** A Postmark source (basic auth from the webhook URL). @example `postmark({ secrets: [{ env: "POSTMARK_WEBHOOK_AUTH" }] })` */
export const postmark: PresetFactory = preset("postmark");
/** A Mailgun source (signature object in the body, 5 min window, token replay refused). @example `mailgun({ secrets: [{ env: "MAILGUN_WEBHOOK_SIGNING_KEY" }] })` */
export const mailgun: Factory<"mailgun"> = factory("mailgun");
/** A Mollie source (next-gen `X-Mollie-Signature`, or classic `?token=` in the webhookUrl). @example `mollie({ secrets: [{ env: "MOLLIE_WEBHOOK_SECRET" }] })` */
export const mollie: Factory<"mollie"> = factory("mollie");
