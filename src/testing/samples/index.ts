/**
 * The sample registry: one realistic, signed sample per provider in the catalogue. A provider
 * added later adds its module here and one entry below; test/testing/samples.test.ts fails
 * until every provider a source may name has a sample our own verifier accepts.
 */

import type { KeyFetcher } from "../../providers/keys/index.ts";
import { adyenSample } from "./adyen.ts";
import { discordSample } from "./discord.ts";
import { paypalSample, plaidSample, pubsubSample, snsSample } from "./fetched-keys.ts";
import { githubSample } from "./github.ts";
import { gitlabSample } from "./gitlab.ts";
import {
  asanaSample,
  dropboxSample,
  metaSample,
  msgraphSample,
  oktaSample,
} from "./handshake-providers.ts";
import { hmacSample } from "./hmac.ts";
import { hubspotSample } from "./hubspot.ts";
import { intercomSample } from "./intercom.ts";
import { firstAnswering } from "./key-material.ts";
import { linearSample } from "./linear.ts";
import { mercadoPagoSample } from "./mercadopago.ts";
import { paddleSample } from "./paddle.ts";
import {
  calendlySample,
  coinbaseSample,
  lemonSqueezySample,
  mailgunSample,
  mollieSample,
  postmarkSample,
  razorpaySample,
  typeformSample,
} from "./presets-commerce.ts";
import {
  bitbucketSample,
  clerkSample,
  jiraSample,
  resendSample,
  sentrySample,
  telegramSample,
  vercelSample,
  workosSample,
  zendeskSample,
} from "./presets-dev.ts";
import { sendgridSample } from "./sendgrid.ts";
import { shopifySample } from "./shopify.ts";
import { slackSample } from "./slack.ts";
import { squareSample } from "./square.ts";
import { standardWebhooksSample } from "./standard-webhooks.ts";
import { stripeSample } from "./stripe.ts";
import { twilioSample } from "./twilio.ts";
import { twitchSample } from "./twitch.ts";
import type { ProviderSample } from "./types.ts";
import { zoomSample } from "./zoom.ts";

export { hmacSampleLayout } from "./hmac.ts";
export { EXAMPLE_RSA_BUNDLE } from "./key-material.ts";
export { alterOneByte } from "./sign.ts";
export type * from "./types.ts";

/**
 * Providers of the catalogue that have no sample yet (they landed alongside the samples):
 * `send` and `probe` refuse them with the list of known providers. Adding a sample removes the
 * name here; the registry test fails until this list is exactly the providers without one.
 */
export const providersWithoutSample: readonly string[] = [];

/** Every sample, keyed by provider name. */
export const providerSamples: ReadonlyMap<string, ProviderSample> = new Map(
  [
    stripeSample,
    githubSample,
    standardWebhooksSample,
    hmacSample,
    shopifySample,
    slackSample,
    twilioSample,
    hubspotSample,
    paddleSample,
    squareSample,
    zoomSample,
    linearSample,
    discordSample,
    gitlabSample,
    intercomSample,
    twitchSample,
    adyenSample,
    mercadoPagoSample,
    sendgridSample,
    clerkSample,
    resendSample,
    workosSample,
    vercelSample,
    sentrySample,
    bitbucketSample,
    jiraSample,
    typeformSample,
    calendlySample,
    lemonSqueezySample,
    razorpaySample,
    coinbaseSample,
    zendeskSample,
    telegramSample,
    postmarkSample,
    mailgunSample,
    mollieSample,
    metaSample,
    dropboxSample,
    oktaSample,
    msgraphSample,
    asanaSample,
    snsSample,
    pubsubSample,
    plaidSample,
    paypalSample,
  ].map((sample) => [sample.provider, sample]),
);

/**
 * The sample of a provider, or undefined when there is none.
 *
 * @example
 * ```ts
 * sampleFor("stripe")?.defaultType; // "customer.subscription.updated"
 * ```
 */
export function sampleFor(provider: string): ProviderSample | undefined {
  return providerSamples.get(provider);
}

/**
 * The source config (provider, secret as the receiver holds it, and the options the sample's
 * layout needs) under which a hookinbox source accepts a provider's sample sent to `url`.
 *
 * @example
 * ```ts
 * sampleSourceConfig(squareSample, "sig-key", "http://127.0.0.1:8080/webhooks/square");
 * // { provider: "square", secrets: ["sig-key"], notificationUrl: "http://127.0.0.1:8080/webhooks/square" }
 * ```
 */
export function sampleSourceConfig(
  sample: ProviderSample,
  secret: string,
  url: string,
): Record<string, unknown> {
  return {
    provider: sample.provider,
    ...(sample.receiverHasNoSecret ? {} : { secrets: [sample.receiverSecret?.(secret) ?? secret] }),
    ...sample.sourceOptions?.(url),
  };
}

/**
 * One key fetcher for every sample that signs with a test key (SNS, Pub/Sub, Plaid, PayPal),
 * each answering with the public half of the secret `secretFor` names for it: what a receiver
 * needs to verify those samples (`startGateway(config, { keyFetcher })`).
 *
 * @example
 * ```ts
 * const keyFetcher = sampleKeyFetcher((sample) => sample.exampleSecret);
 * ```
 */
export function sampleKeyFetcher(secretFor: (sample: ProviderSample) => string): KeyFetcher {
  return firstAnswering(
    [...providerSamples.values()].flatMap((sample) =>
      sample.keyFetcher ? [sample.keyFetcher(secretFor(sample))] : [],
    ),
  );
}
