/**
 * Mollie runs two webhook systems, told apart by the request itself:
 * - **next-gen** webhooks (an event subscription made in the dashboard or the Webhooks API) send
 *   a JSON event (`{"resource":"event","id":"event_…","type":"payment-link.paid","entityId":…}`)
 *   signed in `X-Mollie-Signature: sha256=<hex HMAC-SHA256 of the raw body>` with the webhook's
 *   signing secret;
 * - **classic** webhooks (the `webhookUrl` of a payment, order or subscription) POST only
 *   `id=tr_…`, form-encoded and unsigned: Mollie's answer is that the receiver fetches the
 *   resource from the API. hookinbox still refuses anonymous posts: the `webhookUrl` carries a
 *   token, `?token=<secret>`, compared in constant time.
 *
 * A classic notification says "resource X changed", and every later change of X (paid, then
 * refunded, then charged back) carries the same id. Deduplicating on the id alone would keep the
 * first and drop every later change, so the classic dedup key is the id plus the receipt instant
 * (`tr_…@2026-12-01T00:00:00.000Z`): every notification is its own event, ordered per resource
 * (ordering key = the id), and the handler fetches the current state. A redelivery Mollie sends
 * after a failed answer is then a second event, which is harmless because fetching and applying
 * the current state is idempotent; losing a state change is not.
 */

import { signed } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { contextForm, field, jsonOrUndefined, queryParams, scalarText } from "./body.ts";
import { decodeHex, hmac } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import { findMatchingSecret, readHeader, requireSecrets, utf8Secret } from "./match.ts";
import { matchToken } from "./token.ts";
import type { IdentityContext, IdentitySpec, ProviderScheme, Verified } from "./types.ts";

const SIGNATURE_HEADER = "x-mollie-signature";
const TOKEN_PARAMETER = "token";

/** Mollie id prefixes and the resource each names (classic notifications carry only the id). */
const RESOURCES: Readonly<Record<string, string>> = {
  tr: "payment",
  ord: "order",
  sub: "subscription",
  pl: "payment-link",
  re: "refund",
  chb: "chargeback",
  cst: "customer",
  event: "event",
};

/** The id of a classic (form-encoded) notification, or undefined for a next-gen event. */
function classicId(context: IdentityContext): string | undefined {
  return scalarText(contextForm(context)?.get("id") ?? undefined);
}

/**
 * The Mollie dedup key: a next-gen event's `id` (`event_…`, one per event), or for a classic
 * notification its resource id plus the instant hookinbox read it (see the module comment:
 * later state changes of one payment share its id).
 *
 * @example
 * ```ts
 * mollieEventKey(ctx); // "event_GvJ8WHrp5isUdRub9CJyH" or "tr_WDqYK6vllg@2026-12-01T00:00:00.000Z"
 * ```
 */
export function mollieEventKey(context: IdentityContext): string | undefined {
  const classic = classicId(context);
  if (classic !== undefined) return `${classic}@${new Date().toISOString()}`;
  return scalarText(field(jsonOrUndefined(context), "id"));
}

/**
 * The Mollie event type: a next-gen event's `type` (`payment-link.paid`), or for a classic
 * notification `<resource>.changed` from the id's prefix (`tr_…` → `payment.changed`).
 *
 * @example
 * ```ts
 * mollieEventType(ctx); // "payment.changed"
 * ```
 */
export function mollieEventType(context: IdentityContext): string | undefined {
  const classic = classicId(context);
  if (classic === undefined) return scalarText(field(jsonOrUndefined(context), "type"));
  const prefix = classic.slice(0, Math.max(0, classic.indexOf("_")));
  return `${RESOURCES[prefix] ?? "resource"}.changed`;
}

/**
 * The Mollie ordering key: the resource the notification is about (`entityId` of a next-gen
 * event, the id of a classic one).
 *
 * @example
 * ```ts
 * mollieResource(ctx); // "tr_WDqYK6vllg"
 * ```
 */
export function mollieResource(context: IdentityContext): string | undefined {
  return classicId(context) ?? scalarText(field(jsonOrUndefined(context), "entityId"));
}

/**
 * Where a Mollie notification's identity lives (see {@link mollieEventKey}).
 *
 * @example
 * ```ts
 * mollieIdentity.occurredAt; // "$.createdAt"
 * ```
 */
export const mollieIdentity: IdentitySpec = Object.freeze({
  id: mollieEventKey,
  type: mollieEventType,
  occurredAt: "$.createdAt",
  orderingKey: mollieResource,
});

/**
 * The Mollie scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. with `X-Mollie-Signature` (next-gen): the value, with or without `sha256=`, against the hex
 *    HMAC-SHA256 of the raw body under every active secret → HOOKINBOX_SIGNATURE_MISMATCH;
 * 3. without it (classic): the `token` query parameter must equal an active secret →
 *    HOOKINBOX_SIGNATURE_MISMATCH; neither the header nor the parameter →
 *    HOOKINBOX_SIGNATURE_MISSING.
 *
 * @example
 * ```ts
 * mollieScheme().verifier.verify(request, [{ index: 0, value: "signing secret" }], Date.now());
 * ```
 */
export function mollieScheme(): ProviderScheme {
  return {
    provider: "mollie",
    identity: mollieIdentity,
    verifier: {
      verify(request, secrets): Verified {
        requireSecrets(secrets);
        const header = readHeader(request.headers, SIGNATURE_HEADER);
        if (header !== undefined) {
          const digest = decodeHex(header.startsWith("sha256=") ? header.slice(7) : header);
          const secretIndex = findMatchingSecret(
            secrets,
            utf8Secret,
            (key) => hmac("sha256", key, [request.body]),
            digest === undefined ? [] : [digest],
          );
          return { secretIndex };
        }
        const token = queryParams(request.url).get(TOKEN_PARAMETER);
        if (token === null || token.trim() === "") {
          throw hookinboxError(
            "HOOKINBOX_SIGNATURE_MISSING",
            `expected header ${SIGNATURE_HEADER} (next-gen) or query parameter ${TOKEN_PARAMETER} (classic)`,
          );
        }
        return matchToken(token, secrets);
      },
    },
  };
}

/**
 * A Mollie source (next-gen `X-Mollie-Signature`, or classic `?token=` in the webhookUrl). Returns `{ provider: "mollie", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { mollie: mollie({ secrets: [{ env: "MOLLIE_WEBHOOK_SECRET" }] }) }
 * ```
 */
export const mollie = defineProvider({
  name: "mollie",
  options: signed,
  identity: mollieIdentity,
  docs: "#mollie",
  headers: { signature: ["x-mollie-signature"] },
  scheme: () => mollieScheme(),
});
