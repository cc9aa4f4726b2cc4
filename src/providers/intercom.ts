/**
 * Intercom: `X-Hub-Signature: sha1=<hex>`, HMAC-SHA1 over the raw body keyed with the app's
 * client secret (UTF-8). No timestamp is signed.
 */

import { signed } from "../config/source-fields.ts";
import { decodeHex, hmac } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import {
  findMatchingSecret,
  requireHeader,
  requireSecrets,
  taggedValue,
  utf8Secret,
} from "./match.ts";
import type { IdentitySpec, ProviderScheme, Verified } from "./types.ts";

/**
 * Options of the Intercom scheme (none yet; kept for symmetry with the other schemes).
 *
 * @example
 * ```ts
 * const options: IntercomOptions = {};
 * ```
 */
export type IntercomOptions = Record<string, never>;

const HEADER = "x-hub-signature";

/**
 * Where an Intercom notification's identity lives: its `id` (`notif_…`), `topic` as type
 * (`conversation.user.created`), `created_at` (seconds), and the item (`data.item.id`) as
 * ordering key.
 *
 * @example
 * ```ts
 * intercomIdentity.type; // "$.topic"
 * ```
 */
export const intercomIdentity: IdentitySpec = Object.freeze({
  id: "$.id",
  type: "$.topic",
  occurredAt: "$.created_at",
  orderingKey: "$.data.item.id",
});

/**
 * The Intercom scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. header absent or blank → HOOKINBOX_SIGNATURE_MISSING; no `=` →
 *    HOOKINBOX_SIGNATURE_MALFORMED; a tag other than `sha1` → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED;
 * 3. every active secret; a digest that is not hex matches nothing; no match →
 *    HOOKINBOX_SIGNATURE_MISMATCH.
 *
 * @example
 * ```ts
 * const scheme = intercomScheme();
 * scheme.verifier.verify(request, [{ index: 0, value: "client secret" }], Date.now());
 * ```
 */
export function intercomScheme(_options: IntercomOptions = {}): ProviderScheme {
  return {
    provider: "intercom",
    identity: intercomIdentity,
    verifier: {
      verify(request, secrets): Verified {
        requireSecrets(secrets);
        const header = requireHeader(request.headers, HEADER);
        const digest = decodeHex(taggedValue(header, "sha1", HEADER));
        const secretIndex = findMatchingSecret(
          secrets,
          utf8Secret,
          (key) => hmac("sha1", key, [request.body]),
          digest === undefined ? [] : [digest],
        );
        return { secretIndex };
      },
    },
  };
}

/**
 * An Intercom source (`X-Hub-Signature` sha1). Returns `{ provider: "intercom", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { intercom: intercom({ secrets: [{ env: "INTERCOM_SECRET" }] }) }
 * ```
 */
export const intercom = defineProvider({
  name: "intercom",
  options: signed,
  identity: intercomIdentity,
  docs: "#intercom",
  headers: { signature: ["x-hub-signature"] },
  scheme: () => intercomScheme(),
});
