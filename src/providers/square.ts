/**
 * Square: `x-square-hmacsha256-signature: <base64>`, HMAC-SHA256 keyed with the subscription's
 * signature key (UTF-8) over the notification URL exactly as registered with Square followed by
 * the raw body. No timestamp is signed.
 */

import { publicUrl, signed } from "../config/source-fields.ts";
import { checkPublicUrl } from "./body.ts";
import { decodeBase64, hmac } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import { findMatchingSecret, requireHeader, requireSecrets, utf8Secret } from "./match.ts";
import type { IdentitySpec, ProviderScheme, Verified } from "./types.ts";

/**
 * Options of the Square scheme.
 *
 * @example
 * ```ts
 * const options: SquareOptions = { notificationUrl: "https://hooks.example.com/webhooks/square" };
 * ```
 */
export interface SquareOptions {
  /**
   * The notification URL exactly as registered in the Square subscription (it is signed, so
   * it is configured rather than rebuilt from the request, which a proxy may change).
   */
  readonly notificationUrl: string;
}

const HEADER = "x-square-hmacsha256-signature";

/**
 * Where a Square event's identity lives: `event_id` (stable across retries, which carry a
 * `square-retry-number` header), `type`, `created_at`, and the object `data.id` as ordering key.
 *
 * @example
 * ```ts
 * squareIdentity.id; // "$.event_id"
 * ```
 */
export const squareIdentity: IdentitySpec = Object.freeze({
  id: "$.event_id",
  type: "$.type",
  occurredAt: "$.created_at",
  orderingKey: "$.data.id",
});

/**
 * The Square scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. header absent or blank → HOOKINBOX_SIGNATURE_MISSING;
 * 3. every active secret over `{notificationUrl}{raw body}`; a value that is not canonical
 *    base64 matches nothing; no match → HOOKINBOX_SIGNATURE_MISMATCH.
 *
 * @example
 * ```ts
 * const scheme = squareScheme({ notificationUrl: "https://example.com/webhook" });
 * scheme.verifier.verify(request, [{ index: 0, value: "asdf1234" }], Date.now());
 * ```
 */
export function squareScheme(options: SquareOptions): ProviderScheme {
  checkPublicUrl(options.notificationUrl.split("?")[0] ?? "", "notificationUrl");
  const notificationUrl = options.notificationUrl;
  return {
    provider: "square",
    identity: squareIdentity,
    verifier: {
      verify(request, secrets): Verified {
        requireSecrets(secrets);
        const digest = decodeBase64(requireHeader(request.headers, HEADER));
        const secretIndex = findMatchingSecret(
          secrets,
          utf8Secret,
          (key) => hmac("sha256", key, [notificationUrl, request.body]),
          digest === undefined ? [] : [digest],
        );
        return { secretIndex };
      },
    },
  };
}

/**
 * A Square source (signs the notification URL). Returns `{ provider: "square", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { square: square({ secrets: [{ env: "SQUARE_KEY" }], notificationUrl: "https://hooks.example.com/webhooks/square" }) }
 * ```
 */
export const square = defineProvider({
  name: "square",
  options: { ...signed, notificationUrl: publicUrl.optional() },
  identity: squareIdentity,
  docs: "#square",
  headers: { signature: ["x-square-hmacsha256-signature", "x-square-signature"] },
  scheme: (source, context) =>
    squareScheme({
      notificationUrl: context.endpointUrl(
        source.notificationUrl,
        "notificationUrl",
        "Square signs the notification URL",
      ),
    }),
});
