import { hookinboxError } from "../errors.ts";
import { adyenScheme } from "../providers/adyen.ts";
import { asanaScheme } from "../providers/asana.ts";
import { discordScheme } from "../providers/discord.ts";
import { dropboxScheme } from "../providers/dropbox.ts";
import { githubScheme } from "../providers/github.ts";
import { gitlabScheme } from "../providers/gitlab.ts";
import { hmacScheme } from "../providers/hmac.ts";
import { hubspotScheme } from "../providers/hubspot.ts";
import { intercomScheme } from "../providers/intercom.ts";
import type { KeyFetcher } from "../providers/keys/index.ts";
import { linearScheme } from "../providers/linear.ts";
import { mailgunScheme } from "../providers/mailgun.ts";
import { mercadoPagoScheme } from "../providers/mercadopago.ts";
import { metaScheme } from "../providers/meta.ts";
import { mollieScheme } from "../providers/mollie.ts";
import { msgraphScheme } from "../providers/msgraph.ts";
import { oktaScheme } from "../providers/okta.ts";
import { paddleScheme } from "../providers/paddle.ts";
import { paypalScheme } from "../providers/paypal.ts";
import { plaidScheme } from "../providers/plaid.ts";
import { presetScheme } from "../providers/presets.ts";
import { pubsubScheme } from "../providers/pubsub.ts";
import { sendgridScheme } from "../providers/sendgrid.ts";
import { shopifyScheme } from "../providers/shopify.ts";
import { slackScheme } from "../providers/slack.ts";
import { snsScheme } from "../providers/sns.ts";
import { squareScheme } from "../providers/square.ts";
import { standardWebhooksScheme } from "../providers/standard-webhooks.ts";
import { stripeScheme } from "../providers/stripe.ts";
import { twilioScheme } from "../providers/twilio.ts";
import { twitchScheme } from "../providers/twitch.ts";
import type { AnyProviderScheme } from "../providers/types.ts";
import { zoomScheme } from "../providers/zoom.ts";
import type { SourceConfig } from "./schema.ts";
import { resolveSecret } from "./secrets.ts";
import { parseDuration } from "./units.ts";

/** Stripe's and Standard Webhooks' documented window, when a source sets none. */
const defaultToleranceMs = 300_000;

function requireUrl(value: string | undefined, where: string, why: string): string {
  if (value === undefined) {
    throw hookinboxError(
      "HOOKINBOX_CONFIG_INVALID",
      `\n  - ${where}: ${why}; set http.publicUrl or ${where}`,
    );
  }
  return value.replace(/\/+$/, "");
}

/** What schemes need from the process rather than the config file. */
export interface SchemeRuntime {
  /** Fetches providers' public keys (default: HTTPS with Node's `fetch`; tests inject one). */
  readonly keyFetcher?: KeyFetcher;
  /** The environment, for secrets that are options of a scheme (Meta's verify tokens). */
  readonly env?: Record<string, string | undefined>;
}

/**
 * Builds a source's provider scheme from its config. Providers with their own documented window
 * (Paddle 5 s, Linear 60 s, Twitch 10 min…) keep it unless the source sets `tolerance`.
 *
 * @example
 * ```ts
 * schemeFor("stripe", { provider: "stripe", secrets: ["whsec_…"] }, undefined).provider; // "stripe"
 * ```
 */
export function schemeFor(
  name: string,
  source: SourceConfig,
  httpPublicUrl: string | undefined,
  runtime: SchemeRuntime = {},
): AnyProviderScheme {
  const keys = runtime.keyFetcher ? { fetcher: runtime.keyFetcher } : {};
  const configured =
    "tolerance" in source && source.tolerance !== undefined
      ? parseDuration(source.tolerance)
      : undefined;
  const window = configured === undefined ? {} : { toleranceMs: configured };
  const toleranceMs = configured ?? defaultToleranceMs;
  const at = `sources.${name}`;
  switch (source.provider) {
    case "stripe":
      return stripeScheme({ toleranceMs });
    case "github":
      return githubScheme({ allowSha1: source.allowSha1 ?? false });
    case "standard-webhooks":
      return standardWebhooksScheme({ toleranceMs });
    case "hmac":
      return hmacScheme({
        header: source.header.toLowerCase(),
        prefix: source.prefix,
        algorithm: source.algorithm ?? "sha256",
        encoding: source.encoding ?? "hex",
        secretEncoding: source.secretEncoding ?? "utf8",
        signedContent: source.signedContent ?? "{body}",
        timestampHeader: source.timestampHeader?.toLowerCase(),
        timestampUnit: source.timestampUnit ?? "s",
        idHeader: source.idHeader?.toLowerCase(),
        toleranceMs,
      });
    case "shopify":
      return shopifyScheme();
    case "slack":
      return slackScheme(window);
    case "twilio":
      return twilioScheme({
        publicUrl: requireUrl(
          source.publicUrl ?? httpPublicUrl,
          `${at}.publicUrl`,
          "Twilio signs the public URL it calls",
        ),
      });
    case "hubspot":
      return hubspotScheme({
        publicUrl: requireUrl(
          source.publicUrl ?? httpPublicUrl,
          `${at}.publicUrl`,
          "HubSpot signs the public URL it calls",
        ),
        ...window,
        ...(source.allowLegacy === undefined ? {} : { allowLegacy: source.allowLegacy }),
      });
    case "paddle":
      return paddleScheme(window);
    case "square":
      return squareScheme({
        notificationUrl:
          source.notificationUrl ??
          `${requireUrl(httpPublicUrl, `${at}.notificationUrl`, "Square signs the notification URL")}/webhooks/${name}`,
      });
    case "zoom":
      return zoomScheme(window);
    case "linear":
      return linearScheme(window);
    case "discord":
      return discordScheme(window);
    case "gitlab":
      return gitlabScheme({
        ...window,
        ...(source.requireSignature === undefined
          ? {}
          : { requireSignature: source.requireSignature }),
      });
    case "intercom":
      return intercomScheme();
    case "twitch":
      return twitchScheme(window);
    case "adyen":
      return adyenScheme();
    case "mercadopago":
      return mercadoPagoScheme(window);
    case "sendgrid":
      return sendgridScheme(window);
    case "sns":
      return snsScheme({
        topicArns: source.topicArns,
        autoConfirm: source.autoConfirm ?? false,
        ...window,
        keys,
      });
    case "pubsub":
      return pubsubScheme({
        audience:
          source.audience ??
          `${requireUrl(httpPublicUrl, `${at}.audience`, "Pub/Sub tokens name the push endpoint as audience")}/webhooks/${name}`,
        serviceAccountEmails: source.serviceAccountEmails,
        ...window,
        keys,
      });
    case "plaid":
      return plaidScheme({
        clientId: source.clientId,
        environment: source.environment ?? "production",
        ...window,
        keys,
      });
    case "paypal":
      return paypalScheme({ webhookIds: source.webhookIds, ...window, keys });
    case "meta":
      return metaScheme({
        verifyTokens: source.verifyTokens.map(
          (token, i) =>
            resolveSecret(token, i, `${at}.verifyTokens[${i}]`, runtime.env ?? {}).value,
        ),
      });
    case "dropbox":
      return dropboxScheme();
    case "okta":
      return oktaScheme(source.header === undefined ? {} : { header: source.header.toLowerCase() });
    case "msgraph":
      return msgraphScheme();
    case "asana":
      return asanaScheme({ acceptHandshake: source.acceptHandshake ?? false });
    case "mailgun":
      return mailgunScheme(window);
    case "mollie":
      return mollieScheme();
    default:
      // Every other provider is a preset over the generic machinery (src/providers/presets.ts).
      return presetScheme(source.provider, window);
  }
}
