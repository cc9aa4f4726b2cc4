/**
 * Provider schemes: each verifies a request on its raw bytes and names where the event's
 * identity lives. See src/providers/types.ts for the contract.
 */

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
  type GithubOptions,
  githubEventType,
  githubIdentity,
  githubOrderingKey,
  githubScheme,
} from "./github.js";
export {
  type HmacOptions,
  hmacScheme,
  parseSignedContent,
  type SignedContentSegment,
} from "./hmac.js";
export { findMatchingSecret, readHeader, requireSecrets } from "./match.js";
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
export type * from "./types.js";
