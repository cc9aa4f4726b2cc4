/**
 * What every provider scheme implements: verify a request on its raw bytes, and name where the
 * event's identity lives. Verification throws a `HookinboxError` with exactly one code per
 * defect (see src/errors.ts) and returns which secret matched (its index, never the secret).
 */

/** Read-only access to request headers by lower-case name. */
export interface HeaderReader {
  /** The header value, or undefined when absent. Repeated headers are joined with ", ". */
  get(name: string): string | undefined;
}

/** The parts of an HTTP request a verifier may look at. */
export interface SignedRequest {
  readonly method: string;
  /** Path and query exactly as received, e.g. `/webhooks/stripe?x=1`. */
  readonly url: string;
  readonly headers: HeaderReader;
  /** The raw body bytes, never re-serialised. */
  readonly body: Uint8Array;
}

/** One secret that is valid right now, with its index in the source's configured list. */
export interface ActiveSecret {
  readonly index: number;
  readonly value: string;
}

/** What a successful verification proves. */
export interface Verified {
  /**
   * Index in the source's configured `secrets` of the secret that matched; `null` for schemes
   * that verify with the provider's public keys and use no secret (`usesSecrets: false`).
   */
  readonly secretIndex: number | null;
  /** The signed timestamp in ms since the epoch, where the scheme signs one. */
  readonly signedAt?: number;
}

/** Verifies one request against the currently active secrets. Throws HookinboxError. */
export interface Verifier {
  verify(request: SignedRequest, secrets: readonly ActiveSecret[], nowMs: number): Verified;
}

/**
 * A verifier that may have to fetch the provider's public keys first (SNS certificates, Google's
 * JWKS, Plaid's keys, PayPal certificates). Rejects with a HookinboxError, like `Verifier` throws;
 * a key endpoint that is slow or failing rejects with HOOKINBOX_KEY_UNAVAILABLE (503).
 *
 * @example
 * ```ts
 * const verified = await scheme.verifier.verify(request, secrets, Date.now());
 * ```
 */
export interface AsyncVerifier {
  verify(
    request: SignedRequest,
    secrets: readonly ActiveSecret[],
    nowMs: number,
  ): Promise<Verified>;
}

/** What an identity field reads: the parsed JSON body (lazily) and the headers. */
export interface IdentityContext {
  readonly headers: HeaderReader;
  /** The parsed JSON body; throws HOOKINBOX_BODY_INVALID_JSON when the body is not JSON. */
  json(): unknown;
  /**
   * The raw body bytes (for a split item: the item's bytes). Identity functions of providers
   * that send form-encoded bodies (Slack slash commands and interactivity, Twilio) read their
   * fields from here; without it they find no id. Ingest should always set it.
   */
  readonly body?: Uint8Array;
}

/**
 * Where one identity field comes from: a JSON path into the body (`$.data.object.id`), a header
 * (`header:x-github-delivery`), or, in presets only, a function.
 */
export type IdentityField = string | ((context: IdentityContext) => unknown);

/** Where each part of an event's identity comes from. `id` is required for deduplication. */
export interface IdentitySpec {
  readonly id?: IdentityField;
  readonly type?: IdentityField;
  readonly orderingKey?: IdentityField;
  readonly version?: IdentityField;
  readonly occurredAt?: IdentityField;
}

/**
 * A response a scheme asks ingest to send as is (same shape as ingest's `InboxResponse`).
 *
 * @example
 * ```ts
 * const accepted: ProviderResponse = {
 *   status: 200, headers: { "content-type": "text/plain; charset=utf-8" }, body: "[accepted]",
 * };
 * ```
 */
export interface ProviderResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * The answer to a provider's endpoint handshake (Slack `url_verification`, Zoom
 * `endpoint.url_validation`, Twitch `webhook_callback_verification`, Discord PING). Ingest sends
 * it INSTEAD of storing anything: a handshake is not an event.
 *
 * @example
 * ```ts
 * const answer: HandshakeResponse = { status: 200, headers: { "content-type": "text/plain" }, body: "c0ffee" };
 * ```
 */
export type HandshakeResponse = ProviderResponse;

/**
 * What a scheme's `challenge` answers: the response to send, and whether the request is also
 * stored as an event (Asana's `X-Hook-Secret` handshake, so the operator can read the secret it
 * carries from the stored headers; it is identified with the scheme's identity, secret index null).
 *
 * @example
 * ```ts
 * const answer: ChallengeAnswer = {
 *   response: { status: 200, headers: { "content-type": "text/plain; charset=utf-8" }, body: "1158201444" },
 * };
 * ```
 */
export interface ChallengeAnswer {
  readonly response: HandshakeResponse;
  readonly store?: true;
}

/**
 * One event of a batch request (HubSpot arrays, Adyen `notificationItems`). Ingest identifies
 * and stores each item as its own event: the scheme's identity preset is written against the
 * ITEM, so `identify(source.identity, headers, item.body)` reads the item, not the batch.
 *
 * @example
 * ```ts
 * for (const item of scheme.split?.(request) ?? []) {
 *   const identity = identify(source.identity, headers, item.body); // per item
 * }
 * ```
 */
export interface SplitItem {
  /** Position of the item in the batch, from 0. */
  readonly index: number;
  /** The item's parsed JSON (equal to `JSON.parse` of `body`). */
  readonly json: unknown;
  /** The item's own bytes, sliced verbatim from the raw body (never re-serialised). */
  readonly body: Uint8Array;
}

/**
 * A provider scheme bound to one source's options: its verifier and its identity defaults, and
 * the optional extension points ingest consults after verification.
 *
 * @example
 * ```ts
 * const verified = scheme.verifier.verify(request, secrets, now); // throws on a bad signature
 * const secret = secrets.find((s) => s.index === verified.secretIndex)!;
 * const answer = scheme.handshake?.(request, verified, secret);  // reply and store nothing
 * const items = scheme.split?.(request) ?? [wholeBody];           // one event per item
 * // …store…, then reply scheme.acceptedResponse ?? the default JSON
 * // rejections: status scheme.rejectionStatus ?? error.status
 * ```
 */
export interface ProviderScheme<V extends Verifier | AsyncVerifier = Verifier> {
  readonly provider: string;
  readonly verifier: V;
  /**
   * `false` for schemes that verify with the provider's public keys and configured bindings
   * (topic ARNs, audience, webhook id) instead of secrets: ingest then does not require an active
   * secret. Absent: the scheme needs at least one (fail closed).
   */
  readonly usesSecrets?: false;
  /**
   * Confirms a subscription the provider asks to confirm (SNS `SubscriptionConfirmation` on a
   * source with `autoConfirm`), or returns `undefined` when the request asks for none. Ingest
   * awaits it after verification and before storing; a rejection (HOOKINBOX_SUBSCRIPTION_
   * CONFIRM_FAILED, 503) makes the provider retry. The request is stored either way.
   */
  confirmSubscription?(request: SignedRequest): Promise<void> | undefined;
  /** Identity defaults; for a scheme with `split`, they read one item, not the whole body. */
  readonly identity: IdentitySpec;
  /**
   * Answers the provider's endpoint handshake, or returns `undefined` for an ordinary event.
   * Ingest calls it only AFTER `verifier.verify` succeeded (an unverified handshake is rejected
   * like any forged request), with the active secret that matched (`secret.index ===
   * verified.secretIndex`; Zoom MACs its challenge with it). When it returns a response, ingest
   * sends it and stores nothing. Never throws: a body that is not a well-formed handshake is
   * an ordinary event (`undefined`).
   */
  handshake?(
    request: SignedRequest,
    verified: Verified,
    secret: ActiveSecret,
  ): HandshakeResponse | undefined;
  /**
   * Answers an endpoint challenge that is not an ordinary signed event: a GET (Meta's
   * `hub.challenge`, Dropbox's `challenge`, Okta's verification) or a POST the provider does not
   * sign like its events (Microsoft Graph's `validationToken`, Asana's `X-Hook-Secret`). Ingest
   * calls it BEFORE `verifier.verify`, for every method, with the active secrets; `undefined`
   * means "not a challenge" (a GET then gets 405, a POST is verified as an event). It verifies
   * what the provider lets it verify and throws a HookinboxError for a forged challenge
   * (HOOKINBOX_HANDSHAKE_REJECTED 403, or the signature codes). Only schemes with a challenge
   * accept GET at all.
   */
  challenge?(
    request: SignedRequest,
    secrets: readonly ActiveSecret[],
    nowMs: number,
  ): ChallengeAnswer | undefined;
  /**
   * Splits a verified batch request into its events. Ingest calls it after verification (and
   * after `handshake`), then identifies and stores every item separately (a receipt per item, each linked to its event);
   * an empty list means the request carried no event (answer 2xx, store nothing). Throws
   * HOOKINBOX_BODY_INVALID_JSON when the body is not JSON. Absent: the request is one event.
   */
  split?(request: SignedRequest): SplitItem[];
  /**
   * What to answer when the request was stored (or was a duplicate), instead of ingest's
   * default JSON; e.g. Adyen requires the body `[accepted]`. Never used for rejections.
   */
  readonly acceptedResponse?: ProviderResponse;
  /**
   * The HTTP status for EVERY verification failure of this scheme (signature and timestamp
   * codes), instead of each code's own status; the code in the body stays exact. Discord
   * requires 401 for any request it considers unverified and probes endpoints for it.
   */
  readonly rejectionStatus?: number;
}

/**
 * A scheme whose verifier may be synchronous or asynchronous: what a resolved source holds.
 *
 * @example
 * ```ts
 * const pending = scheme.verifier.verify(request, secrets, now);
 * const verified = pending instanceof Promise ? await pending : pending;
 * ```
 */
export type AnyProviderScheme = ProviderScheme<Verifier | AsyncVerifier>;
