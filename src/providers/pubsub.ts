/**
 * Google Cloud Pub/Sub push subscriptions with authentication on: `Authorization: Bearer <JWT>`,
 * an OIDC ID token signed by Google (RS256, keys from Google's JWKS), whose `aud` is the audience
 * configured on the subscription and whose `email` is the subscription's service account. The
 * token authenticates the push; it does not sign the body (Pub/Sub signs none). The body is the
 * push envelope `{ message: { data (base64), attributes, messageId, publishTime, orderingKey },
 * subscription }`; {@link pubsubMessage} decodes `data` for handlers.
 */

import { z } from "zod";
import { duration, unsigned } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { field, jsonOrUndefined, path, scalarText } from "./body.ts";
import { defineProvider } from "./definition.ts";
import { jwsSignatureValid, numericClaim, parseJws, requireAlgorithm } from "./jwt.ts";
import { jwksSource, type KeyFetchOptions, type KeyUrlRule } from "./keys/index.ts";
import { readHeader } from "./match.ts";
import { checkTolerance } from "./timestamps.ts";
import type { AsyncVerifier, IdentityContext, IdentitySpec, ProviderScheme } from "./types.ts";

/**
 * Options of the Pub/Sub push scheme.
 *
 * @example
 * ```ts
 * const options: PubsubOptions = {
 *   audience: "https://hooks.example.com/webhooks/pubsub",
 *   serviceAccountEmails: ["push@my-project.iam.gserviceaccount.com"],
 * };
 * ```
 */
export interface PubsubOptions {
  /** The token's required `aud`: the subscription's audience (by default its push endpoint URL). */
  readonly audience: string;
  /** The service accounts whose tokens are accepted (the subscription's push auth account). */
  readonly serviceAccountEmails: readonly string[];
  /** Clock skew allowed on the token's `iat` and `exp`, in ms (default 300 000, as Google's libraries). */
  readonly toleranceMs?: number;
  /** Fetching and caching Google's keys (tests inject a fetcher). */
  readonly keys?: KeyFetchOptions;
}

/** Google's OAuth2 signing keys, as JWKS. */
export const googleJwksUrl = "https://www.googleapis.com/oauth2/v3/certs";
const googleRule: KeyUrlRule = Object.freeze({
  host: /^www\.googleapis\.com$/,
  path: /^\/oauth2\/v3\/certs$/,
});
const ISSUERS = new Set(["https://accounts.google.com", "accounts.google.com"]);

/** The push message's attributes, decoded data and metadata. */
export interface PubsubMessage {
  readonly messageId: string | undefined;
  readonly publishTime: string | undefined;
  readonly orderingKey: string | undefined;
  readonly attributes: Readonly<Record<string, string>>;
  /** `message.data`, base64-decoded (empty when absent). */
  readonly data: Buffer;
  /** The subscription that pushed it (`projects/…/subscriptions/…`). */
  readonly subscription: string | undefined;
  /** `data` as UTF-8 text. */
  text(): string;
  /** `data` parsed as JSON (throws when it is not JSON). */
  json<T = unknown>(): T;
}

/**
 * Decodes a Pub/Sub push envelope (a handler's `event.payload`): the base64 `data` as bytes,
 * text or JSON, and the message's attributes and metadata.
 *
 * @example
 * ```ts
 * handlers: {
 *   "pubsub:*": async (event) => {
 *     const message = pubsubMessage(event.payload);
 *     const order = message.json<{ id: string }>();
 *   },
 * }
 * ```
 */
export function pubsubMessage(payload: unknown): PubsubMessage {
  const message = field(payload, "message");
  const data = field(message, "data");
  const bytes = typeof data === "string" ? Buffer.from(data, "base64") : Buffer.alloc(0);
  const attributes: Record<string, string> = {};
  const raw = field(message, "attributes");
  if (typeof raw === "object" && raw !== null) {
    for (const [name, value] of Object.entries(raw)) {
      if (typeof value === "string") attributes[name] = value;
    }
  }
  return {
    messageId: scalarText(field(message, "messageId") ?? field(message, "message_id")),
    publishTime: scalarText(field(message, "publishTime") ?? field(message, "publish_time")),
    orderingKey: scalarText(field(message, "orderingKey")),
    attributes,
    data: bytes,
    subscription: scalarText(field(payload, "subscription")),
    text: () => bytes.toString("utf8"),
    json: <T>() => JSON.parse(bytes.toString("utf8")) as T,
  };
}

function messageField(context: IdentityContext, camel: string, snake: string) {
  const body = jsonOrUndefined(context);
  return scalarText(path(body, "message", camel) ?? path(body, "message", snake));
}

/**
 * The message id: `message.messageId` of the push envelope (or `message_id`), or the
 * `x-goog-pubsub-message-id` header of an unwrapped push.
 *
 * @example
 * ```ts
 * pubsubMessageId(ctx); // "2070443601311540"
 * ```
 */
export function pubsubMessageId(context: IdentityContext): string | undefined {
  return (
    messageField(context, "messageId", "message_id") ??
    readHeader(context.headers, "x-goog-pubsub-message-id")
  );
}

/**
 * Where a Pub/Sub push message's identity lives: the message id, the `eventType` (or `type`)
 * attribute as type, `publishTime`, and the message's `orderingKey`.
 *
 * @example
 * ```ts
 * pubsubIdentity.id === pubsubMessageId; // true
 * ```
 */
export const pubsubIdentity: IdentitySpec = Object.freeze({
  id: pubsubMessageId,
  type: (context: IdentityContext) => {
    const attributes = path(jsonOrUndefined(context), "message", "attributes");
    return scalarText(field(attributes, "eventType") ?? field(attributes, "type"));
  },
  occurredAt: (context: IdentityContext) =>
    messageField(context, "publishTime", "publish_time") ??
    readHeader(context.headers, "x-goog-pubsub-publish-time"),
  orderingKey: (context: IdentityContext) => messageField(context, "orderingKey", "orderingKey"),
});

/**
 * The Pub/Sub push scheme. Verification, in order:
 * 1. `Authorization` absent or blank → HOOKINBOX_SIGNATURE_MISSING; not `Bearer <JWT>` →
 *    HOOKINBOX_SIGNATURE_MALFORMED; header `alg` not RS256 → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED;
 *    no `kid` → HOOKINBOX_SIGNATURE_MALFORMED;
 * 2. the key by `kid` from Google's JWKS (cached; an unknown `kid` refetches once): endpoint down
 *    or slow → HOOKINBOX_KEY_UNAVAILABLE (503), still unknown → HOOKINBOX_KEY_UNKNOWN;
 * 3. the signature → HOOKINBOX_SIGNATURE_MISMATCH;
 * 4. `iss` not Google's or `aud` not `audience` → HOOKINBOX_TOKEN_CLAIM_MISMATCH; `email` not one
 *    of `serviceAccountEmails` or `email_verified` not true → HOOKINBOX_SENDER_NOT_ALLOWED;
 * 5. `exp` or `iat` absent → HOOKINBOX_TIMESTAMP_MISSING; expired (beyond the skew) →
 *    HOOKINBOX_TIMESTAMP_TOO_OLD; issued in the future (beyond the skew) →
 *    HOOKINBOX_TIMESTAMP_IN_FUTURE.
 * Uses no secret (`usesSecrets: false`).
 *
 * @example
 * ```ts
 * const scheme = pubsubScheme({ audience, serviceAccountEmails: ["push@p.iam.gserviceaccount.com"] });
 * await scheme.verifier.verify(request, [], Date.now());
 * ```
 */
export function pubsubScheme(options: PubsubOptions): ProviderScheme<AsyncVerifier> {
  if (options.audience === "") throw new Error("a Pub/Sub source needs an audience");
  const emails = new Set(options.serviceAccountEmails);
  if (emails.size === 0) throw new Error("a Pub/Sub source needs a service account email");
  const skewMs = checkTolerance(options.toleranceMs ?? 300_000);
  const googleKey = jwksSource(googleJwksUrl, [googleRule], options.keys);
  return {
    provider: "pubsub",
    identity: pubsubIdentity,
    usesSecrets: false,
    verifier: {
      async verify(request, _secrets, nowMs) {
        const authorization = readHeader(request.headers, "authorization");
        if (authorization === undefined) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", "expected header authorization");
        }
        const bearer = /^Bearer +(\S+)$/i.exec(authorization);
        if (bearer === null) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", "expected Bearer <token>");
        }
        const token = parseJws(bearer[1] ?? "");
        const kid = requireAlgorithm(token, "RS256");
        const key = await googleKey(kid, nowMs);
        if (!jwsSignatureValid(token, key, "RS256")) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MISMATCH");
        }
        const claims = token.payload;
        if (!ISSUERS.has(String(claims.iss)) || claims.aud !== options.audience) {
          throw hookinboxError(
            "HOOKINBOX_TOKEN_CLAIM_MISMATCH",
            "the token's issuer or audience is not this source's",
          );
        }
        if (!emails.has(String(claims.email)) || claims.email_verified !== true) {
          throw hookinboxError(
            "HOOKINBOX_SENDER_NOT_ALLOWED",
            "the token's service account is not in serviceAccountEmails",
          );
        }
        const exp = numericClaim(claims, "exp");
        const iat = numericClaim(claims, "iat");
        if (exp === undefined || iat === undefined) {
          throw hookinboxError("HOOKINBOX_TIMESTAMP_MISSING", "the token has no exp or iat");
        }
        if (nowMs > exp * 1000 + skewMs) {
          throw hookinboxError("HOOKINBOX_TIMESTAMP_TOO_OLD", "the token has expired");
        }
        if (iat * 1000 - nowMs > skewMs) {
          throw hookinboxError(
            "HOOKINBOX_TIMESTAMP_IN_FUTURE",
            "the token is issued in the future",
          );
        }
        return { secretIndex: null, signedAt: iat * 1000 };
      },
    },
  };
}

/**
 * A Google Cloud Pub/Sub push source (OIDC token from the subscription's service account). Returns `{ provider: "pubsub", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { pubsub: pubsub({ serviceAccountEmails: ["push@my-project.iam.gserviceaccount.com"] }) }
 * ```
 */
export const pubsub = defineProvider({
  name: "pubsub",
  options: {
    // Verified with Google's keys: the audience and service account are the binding.
    ...unsigned,
    /** Default: http.publicUrl + "/webhooks/<source>" (Pub/Sub's default audience). */
    audience: z.string().min(1).optional(),
    serviceAccountEmails: z
      .array(z.string().email("expected a service account email"))
      .min(1, "a Pub/Sub source accepts only the service accounts it names (fail closed)"),
    tolerance: duration.optional(),
  },
  identity: pubsubIdentity,
  docs: "#google-cloud-pubsub-push",
  headers: {
    signature: ["authorization"],
    context: ["x-goog-pubsub-message-id", "x-goog-pubsub-publish-time"],
  },
  scheme: (source, context) =>
    pubsubScheme({
      audience: context.endpointUrl(
        source.audience,
        "audience",
        "Pub/Sub tokens name the push endpoint as audience",
      ),
      serviceAccountEmails: source.serviceAccountEmails,
      ...context.window,
      keys: context.keys,
    }),
});
