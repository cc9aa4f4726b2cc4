/**
 * The contract of a provider sample: a small, realistic event shaped like the provider's real
 * payloads, signed exactly as the provider signs it. `hookinbox send` and `hookinbox probe` use
 * samples to test any receiver; tests use them to prove our own verifiers accept what the
 * providers send. One module per provider in this folder, one entry in `index.ts`.
 */

import type { KeyFetcher } from "../../providers/keys/index.ts";

/** What a sample is built from. Everything but `secret`, `url`, `nowMs` and `id` is optional. */
export interface SampleInput {
  /** The secret the provider signs with (Discord: the Ed25519 private key seed, hex). */
  readonly secret: string;
  /** The full URL the request is sent to; Twilio, Square and HubSpot sign it. */
  readonly url: string;
  /** When the request is signed (ms since the epoch). */
  readonly nowMs: number;
  /** The provider's event id, or the token the sample derives its synthetic-key fields from. */
  readonly id: string;
  /** The event type in the provider's words (`invoice.paid`, `issues.opened`, `orders/create`). */
  readonly type?: string;
  /** A raw body to sign as is instead of the built one (`hookinbox send --data FILE`). */
  readonly body?: string;
  /** The resource (customer, issue, meeting…) the event is about. */
  readonly resource?: string;
  /** A monotonic version of the resource (larger is newer), placed where the provider puts one. */
  readonly sequence?: number;
  /** Marks the request as the provider's redelivery of an earlier one (retry headers). */
  readonly redelivery?: boolean;
}

/** One signed request, ready to send. */
export interface SampleRequest {
  /** Where to send it: the input URL, plus a query where the provider adds one (Mercado Pago). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The dedup key a correct receiver (hookinbox's preset) derives from this request. */
  readonly eventId: string | undefined;
  readonly type: string;
  /** The resource version as carried in the payload, when the sample placed one. */
  readonly version?: string;
}

/** A handshake request and how to recognise a correct answer to it. */
export interface SampleHandshake {
  readonly request: SampleRequest;
  /** True when the receiver's answer completes the handshake. */
  accepts(status: number, body: string): boolean;
}

/** What the probe needs to know about a provider's scheme. */
export interface SampleTraits {
  /**
   * What the signature covers: `body` (the raw bytes: altering or re-spacing them must be
   * refused), `fields` (named values inside the body, Adyen) or `nothing` (a plain token, or a
   * manifest without the body, GitLab tokens, Mercado Pago).
   */
  readonly signs: "body" | "fields" | "nothing";
  /** The provider's documented timestamp window in ms; absent when nothing time-bound is signed. */
  readonly timestampWindowMs?: number;
  /** `json` bodies can be re-serialised with other spacing; `form` bodies cannot. */
  readonly bodyFormat: "json" | "form";
  /**
   * `per-notification` when the provider sends no id and a receiver keys every notification
   * afresh (Dropbox: "something changed for these accounts"): the sample announces no dedup key
   * and redeliveries are not deduplicated.
   */
  readonly dedup?: "per-notification";
}

/**
 * A provider's sample. `build` never throws for a well-formed input and never reads the clock:
 * everything time-bound comes from `nowMs` and `sequence`.
 *
 * @example
 * ```ts
 * const request = stripeSample.build({ secret: "whsec_…", url, nowMs: Date.now(), id: stripeSample.newId() });
 * await fetch(request.url, { method: "POST", headers: request.headers, body: request.body });
 * ```
 */
export interface ProviderSample {
  /** The provider name, as in a source's `provider`. */
  readonly provider: string;
  /** Where the payload's shape comes from (cited, and kept small). */
  readonly origin: string;
  readonly defaultType: string;
  /** A real but rarely handled type, for "an unhandled event type → 2xx". */
  readonly unhandledType: string;
  /** The type name that selects the handshake (`url_verification`…), when there is one. */
  readonly handshakeType?: string;
  /** A secret in the provider's format, for examples and tests. */
  readonly exampleSecret: string;
  traits(secret: string): SampleTraits;
  /** A fresh id in the provider's format (`evt_…`, a GUID…). */
  newId(): string;
  build(input: SampleInput): SampleRequest;
  handshake?(input: SampleInput): SampleHandshake;
  /** What the receiver is configured with, when it differs from the signing secret (Discord). */
  receiverSecret?(secret: string): string;
  /**
   * `true` for providers whose receiver holds no secret (SNS, Pub/Sub, PayPal verify with the
   * provider's public keys and a binding in `sourceOptions`).
   */
  readonly receiverHasNoSecret?: true;
  /**
   * For providers that sign with private keys whose public half the receiver fetches: a key
   * fetcher answering the provider's key URLs with the public half of `secret` (the sample's test
   * key). A receiver verifies the sample only when given this fetcher.
   */
  keyFetcher?(secret: string): KeyFetcher;
  /**
   * The extra source options a hookinbox source needs to accept this sample at `url` (Square's
   * notification URL, Twilio's and HubSpot's public URL, the generic HMAC's header layout).
   */
  sourceOptions?(url: string): Record<string, unknown>;
  /** Alters one byte in a signed part of the body (default: the last digit of the body). */
  tamper?(body: string): string;
}
