/**
 * Adyen (standard payment webhooks). There is no signature header: each notification item in
 * the JSON body carries `additionalData.hmacSignature`, the base64 HMAC-SHA256 keyed with the
 * HEX-DECODED HMAC key over
 * `pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success`
 * (`value`/`currency` from `amount`; a missing field is the empty string). A request is
 * verified only if EVERY item verifies, all with the same key. Adyen batches items, expects the
 * body `[accepted]` on success, and gives no event id (see {@link adyenEventKey}).
 */

import { signed } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { field, scalarText, utf8Text } from "./body.ts";
import { constantTimeEqual, decodeBase64, decodeSecret, hmac, memoizeKeys } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import { requireSecrets } from "./match.ts";
import { splitJson } from "./split.ts";
import type {
  IdentityContext,
  IdentitySpec,
  ProviderResponse,
  ProviderScheme,
  Verified,
} from "./types.ts";

/**
 * Options of the Adyen scheme (none yet; kept for symmetry with the other schemes).
 *
 * @example
 * ```ts
 * const options: AdyenOptions = {};
 * ```
 */
export type AdyenOptions = Record<string, never>;

const ITEMS = "notificationItems";
const ITEM = "NotificationRequestItem";
const SIGNED_FIELDS = [
  ["pspReference"],
  ["originalReference"],
  ["merchantAccountCode"],
  ["merchantReference"],
  ["amount", "value"],
  ["amount", "currency"],
  ["eventCode"],
  ["success"],
] as const;

function signedField(item: unknown, names: readonly string[]): string {
  let value: unknown = item;
  for (const name of names) {
    if (value === undefined || value === null) return "";
    if (typeof value !== "object" || Array.isArray(value)) {
      throw hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", `${names.join(".")} is not a field`);
    }
    value = field(value, name);
  }
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  throw hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", `${names.join(".")} is not a scalar`);
}

/**
 * The string Adyen signs for one `NotificationRequestItem` (missing fields are empty).
 *
 * @throws HookinboxError HOOKINBOX_SIGNATURE_MALFORMED when a signed field is an object or array.
 * @example
 * ```ts
 * adyenSignedData(item); // "7914073381342284::TestMerchant:TestPayment-1407325143704:1130:EUR:AUTHORISATION:true"
 * ```
 */
export function adyenSignedData(item: unknown): string {
  return SIGNED_FIELDS.map((names) => signedField(item, names)).join(":");
}

/**
 * The Adyen dedup key of one item (Adyen gives no event id): `<pspReference>:<eventCode>:<success>`
 * (`8816178952380553:AUTHORISATION:true`). `pspReference` names the payment or modification,
 * `eventCode` what happened to it, and `success` keeps a failed attempt apart from a later
 * successful one of the same kind; Adyen resends all three unchanged on retries. No
 * `pspReference` or `eventCode` → no id (HOOKINBOX_EVENT_ID_MISSING).
 *
 * @example
 * ```ts
 * adyenEventKey(ctx); // "8816178952380553:AUTHORISATION:true"
 * ```
 */
export function adyenEventKey(context: IdentityContext): string | undefined {
  const item = context.json();
  const psp = scalarText(field(item, "pspReference"));
  const code = scalarText(field(item, "eventCode"));
  if (psp === undefined || code === undefined) return undefined;
  const success = field(item, "success");
  return `${psp}:${code}:${typeof success === "boolean" ? String(success) : (scalarText(success) ?? "")}`;
}

/**
 * Where an Adyen item's identity lives (read from ONE `NotificationRequestItem`):
 * {@link adyenEventKey}, `eventCode` as type, `eventDate`, and the payment the event is about
 * (`originalReference` for modifications such as refunds, else `pspReference`) as ordering key.
 *
 * @example
 * ```ts
 * adyenIdentity.type; // "$.eventCode"
 * ```
 */
export const adyenIdentity: IdentitySpec = Object.freeze({
  id: adyenEventKey,
  type: "$.eventCode",
  occurredAt: "$.eventDate",
  orderingKey: (context: IdentityContext) => {
    const item = context.json();
    return scalarText(field(item, "originalReference")) ?? scalarText(field(item, "pspReference"));
  },
});

/**
 * What Adyen must receive for a stored (or duplicate) notification: `200 text/plain [accepted]`.
 *
 * @example
 * ```ts
 * adyenAcceptedResponse.body; // "[accepted]"
 * ```
 */
export const adyenAcceptedResponse: ProviderResponse = Object.freeze({
  status: 200,
  headers: Object.freeze({ "content-type": "text/plain; charset=utf-8" }),
  body: "[accepted]",
});

interface SignedItem {
  readonly data: string;
  readonly signature: Buffer | undefined;
}

function signedItems(body: Uint8Array): SignedItem[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8Text(body));
  } catch (error) {
    throw hookinboxError("HOOKINBOX_BODY_INVALID_JSON", "Adyen signs items inside the body", error);
  }
  const items = field(parsed, ITEMS);
  if (!Array.isArray(items) || items.length === 0) {
    throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", `expected a non-empty ${ITEMS} array`);
  }
  return items.map((element) => {
    const item = field(element, ITEM);
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      throw hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", `expected ${ITEMS}[].${ITEM} objects`);
    }
    const additional = field(item, "additionalData");
    const signature = field(additional, "hmacSignature");
    if (typeof signature !== "string" || signature.trim() === "") {
      throw hookinboxError(
        "HOOKINBOX_SIGNATURE_MISSING",
        "an item has no additionalData.hmacSignature",
      );
    }
    return { data: adyenSignedData(item), signature: decodeBase64(signature.trim()) };
  });
}

/**
 * The Adyen scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. body not JSON → HOOKINBOX_BODY_INVALID_JSON; no non-empty `notificationItems` array →
 *    HOOKINBOX_SIGNATURE_MISSING; an element without a `NotificationRequestItem` object, or a
 *    signed field that is an object or array → HOOKINBOX_SIGNATURE_MALFORMED; an item without
 *    `additionalData.hmacSignature` → HOOKINBOX_SIGNATURE_MISSING;
 * 3. each active key (hex-decoded; keys that are not hex are skipped, none usable →
 *    HOOKINBOX_SOURCE_NO_ACTIVE_SECRET) must verify EVERY item; a signature that is not
 *    canonical base64 matches nothing; no key verifies all → HOOKINBOX_SIGNATURE_MISMATCH.
 * `split` makes one item per `NotificationRequestItem`; `acceptedResponse` is `[accepted]`.
 *
 * @example
 * ```ts
 * const scheme = adyenScheme();
 * scheme.verifier.verify(request, [{ index: 0, value: "44782DEF547AAA06C910C43932B1EB0C…" }], Date.now());
 * ```
 */
export function adyenScheme(_options: AdyenOptions = {}): ProviderScheme {
  const keyOf = memoizeKeys((secret) => decodeSecret(secret, "hex"));
  return {
    provider: "adyen",
    identity: adyenIdentity,
    acceptedResponse: adyenAcceptedResponse,
    split: (request) => splitJson(request.body, [ITEMS], ITEM),
    verifier: {
      verify(request, secrets): Verified {
        requireSecrets(secrets);
        const items = signedItems(request.body);
        let usable = 0;
        for (const secret of secrets) {
          const key = keyOf(secret.value);
          if (key === undefined) continue;
          usable++;
          let all = true;
          for (const item of items) {
            const expected = hmac("sha256", key, [item.data]);
            // Every item is checked even after a failure, so timing does not reveal which failed.
            if (item.signature === undefined || !constantTimeEqual(expected, item.signature)) {
              all = false;
            }
          }
          if (all) return { secretIndex: secret.index };
        }
        if (usable === 0) {
          throw hookinboxError(
            "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
            "no active secret is a hex HMAC key",
          );
        }
        throw hookinboxError("HOOKINBOX_SIGNATURE_MISMATCH");
      },
    },
  };
}

/**
 * An Adyen source (HMAC per notification item; replies `[accepted]`). Returns `{ provider: "adyen", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { adyen: adyen({ secrets: [{ env: "ADYEN_HMAC_KEY" }] }) }
 * ```
 */
export const adyen = defineProvider({
  name: "adyen",
  options: signed,
  identity: adyenIdentity,
  docs: "#adyen",
  // Signature headers empty: the HMAC signature is inside each notification item of the body.
  headers: { signature: [] },
  scheme: () => adyenScheme(),
});
