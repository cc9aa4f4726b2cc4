/**
 * Provider schemes: each verifies a request on its raw bytes and names where the event's
 * identity lives. See src/providers/types.ts for the contract.
 */

export {
  type AdyenOptions,
  adyenAcceptedResponse,
  adyenEventKey,
  adyenIdentity,
  adyenScheme,
  adyenSignedData,
} from "./adyen.ts";
export { checkPublicUrl, formParams, fullUrl, queryParams } from "./body.ts";
export {
  asBuffer,
  constantTimeEqual,
  decodeBase64,
  decodeHex,
  decodeSecret,
  type HmacAlgorithm,
  hmac,
  memoizeKeys,
  type SecretEncoding,
} from "./crypto.js";
export {
  type DiscordOptions,
  discordHandshake,
  discordIdentity,
  discordInteractionType,
  discordOccurredAt,
  discordPublicKey,
  discordScheme,
} from "./discord.ts";
export {
  type GithubOptions,
  githubEventType,
  githubIdentity,
  githubOrderingKey,
  githubScheme,
} from "./github.js";
export {
  type GitlabOptions,
  gitlabEventId,
  gitlabIdentity,
  gitlabOrderingKey,
  gitlabScheme,
} from "./gitlab.ts";
export {
  type HmacOptions,
  hmacScheme,
  parseSignedContent,
  type SignedContentSegment,
} from "./hmac.js";
export {
  type HubspotOptions,
  hubspotDecodeUri,
  hubspotEventKey,
  hubspotIdentity,
  hubspotOrderingKey,
  hubspotScheme,
} from "./hubspot.ts";
export { type IntercomOptions, intercomIdentity, intercomScheme } from "./intercom.ts";
export { arrayItemSpans, type Span } from "./json-spans.ts";
export {
  type JwsAlgorithm,
  jwsSignatureValid,
  numericClaim,
  type ParsedJws,
  parseJws,
  requireAlgorithm,
} from "./jwt.ts";
export * from "./keys/index.ts";
export {
  type LinearOptions,
  linearEventType,
  linearIdentity,
  linearScheme,
} from "./linear.ts";
export { type MailgunOptions, mailgunIdentity, mailgunScheme } from "./mailgun.ts";
export {
  findMatchingSecret,
  findMatchingSecretAmong,
  readHeader,
  requireHeader,
  requireSecrets,
  requireTimestampHeader,
  taggedValue,
  utf8Secret,
} from "./match.js";
export {
  type MercadoPagoOptions,
  mercadoPagoIdentity,
  mercadoPagoManifest,
  mercadoPagoScheme,
} from "./mercadopago.ts";
export {
  mollieEventKey,
  mollieEventType,
  mollieIdentity,
  mollieResource,
  mollieScheme,
} from "./mollie.ts";
export { type PaddleOptions, paddleIdentity, paddleScheme } from "./paddle.ts";
export {
  crc32,
  type PaypalOptions,
  paypalCertificateRule,
  paypalIdentity,
  paypalScheme,
  paypalSignedString,
} from "./paypal.ts";
export {
  type PlaidEnvironment,
  type PlaidOptions,
  plaidEventKey,
  plaidIdentity,
  plaidScheme,
} from "./plaid.ts";
export {
  googleJwksUrl,
  type PubsubMessage,
  type PubsubOptions,
  pubsubIdentity,
  pubsubMessage,
  pubsubMessageId,
  pubsubScheme,
} from "./pubsub.ts";
export {
  type SendgridOptions,
  sendgridIdentity,
  sendgridPublicKey,
  sendgridScheme,
} from "./sendgrid.ts";
export {
  type ShopifyOptions,
  shopifyIdentity,
  shopifyOrderingKey,
  shopifyScheme,
} from "./shopify.ts";
export {
  type SlackOptions,
  slackEventId,
  slackEventType,
  slackHandshake,
  slackIdentity,
  slackOrderingKey,
  slackScheme,
} from "./slack.ts";
export {
  parseSnsMessage,
  type SnsMessage,
  type SnsOptions,
  snsCertificateRule,
  snsIdentity,
  snsScheme,
  snsStringToSign,
  snsSubscribeRule,
} from "./sns.ts";
export { splitJson } from "./split.ts";
export { type SquareOptions, squareIdentity, squareScheme } from "./square.ts";
export {
  type StandardWebhooksOptions,
  standardWebhooksId,
  standardWebhooksIdentity,
  standardWebhooksKey,
  standardWebhooksOccurredAt,
  standardWebhooksScheme,
} from "./standard-webhooks.js";
export { type StripeOptions, stripeIdentity, stripeScheme } from "./stripe.js";
export {
  checkTimestamp,
  checkTolerance,
  parseTimestamp,
  parseTimestampSeconds,
} from "./timestamps.js";
export {
  type TwilioOptions,
  twilioEventId,
  twilioEventType,
  twilioIdentity,
  twilioOrderingKey,
  twilioParamString,
  twilioScheme,
  twilioUrlVariants,
} from "./twilio.ts";
export {
  parseRfc3339,
  type TwitchOptions,
  twitchEventType,
  twitchHandshake,
  twitchIdentity,
  twitchScheme,
} from "./twitch.ts";
export type * from "./types.js";
export {
  type ZoomOptions,
  zoomEventKey,
  zoomHandshake,
  zoomIdentity,
  zoomScheme,
} from "./zoom.ts";
