// Payload: a standard AUTHORISATION notification as in Adyen's webhook docs
// (docs.adyen.com/development-resources/webhooks/webhook-types), one item.
import { digits, mac } from "./sign.ts";
import type { ProviderSample } from "./types.ts";

interface AdyenItem {
  additionalData?: Record<string, unknown>;
  amount?: { currency?: string; value?: number };
  eventCode?: string;
  merchantAccountCode?: string;
  merchantReference?: string;
  originalReference?: string;
  pspReference?: string;
  success?: string;
  [name: string]: unknown;
}

/** The HMAC Adyen puts in one item: base64 HMAC-SHA256, hex-decoded key, over 8 named fields. */
function itemSignature(item: AdyenItem, hexKey: string): string {
  const text = [
    item.pspReference,
    item.originalReference,
    item.merchantAccountCode,
    item.merchantReference,
    item.amount?.value,
    item.amount?.currency,
    item.eventCode,
    item.success,
  ]
    .map((part) => (part === undefined ? "" : String(part)))
    .join(":");
  return mac("sha256", Buffer.from(hexKey, "hex"), text, "base64");
}

/** Signs every item of an Adyen body in place (a `--data` body gets fresh signatures). */
function signItems(
  body: { notificationItems?: Array<{ NotificationRequestItem?: AdyenItem }> },
  hexKey: string,
) {
  for (const entry of body.notificationItems ?? []) {
    const item = entry.NotificationRequestItem;
    if (item === undefined) continue;
    item.additionalData = { ...item.additionalData, hmacSignature: itemSignature(item, hexKey) };
  }
  return body;
}

/**
 * Adyen: no signature header; each item carries `additionalData.hmacSignature` over its
 * `pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success`
 * keyed with the hex-decoded HMAC key. The key is `pspReference:eventCode:success`; the
 * receiver answers `[accepted]`. The secret is the HMAC key, hex.
 *
 * @example
 * ```ts
 * adyenSample.build({ secret: "44782DEF…", url, nowMs: Date.now(), id: "8816178952380553" });
 * ```
 */
export const adyenSample: ProviderSample = {
  provider: "adyen",
  origin: "docs.adyen.com webhook types: standard AUTHORISATION notification",
  defaultType: "AUTHORISATION",
  unhandledType: "REPORT_AVAILABLE",
  exampleSecret: "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056",
  traits: () => ({ signs: "fields", bodyFormat: "json" }),
  newId: () => digits(String(Math.random()), 16),
  // The pspReference is signed; the last digit of the body may sit in an unsigned field.
  tamper: (body) =>
    body.replace(
      /"pspReference":"(\d*)(\d)"/,
      (_, head: string, last: string) =>
        `"pspReference":"${head}${last === "9" ? "8" : String(Number(last) + 1)}"`,
    ),
  build(input) {
    const type = input.type ?? this.defaultType;
    const parsed =
      input.body === undefined
        ? {
            live: "false",
            notificationItems: [
              {
                NotificationRequestItem: {
                  additionalData: { authCode: "082338", cardSummary: "0010" },
                  amount: { currency: "EUR", value: 1000 },
                  eventCode: type,
                  eventDate: new Date(
                    input.sequence === undefined ? input.nowMs : input.sequence * 1000,
                  )
                    .toISOString()
                    .replace(/\.\d{3}Z$/, "+00:00"),
                  merchantAccountCode: "YOUR_MERCHANT_ACCOUNT",
                  merchantReference: "YOUR_MERCHANT_REFERENCE",
                  ...(input.resource === undefined ? {} : { originalReference: input.resource }),
                  paymentMethod: "mc",
                  pspReference: input.id,
                  reason: "082338:0010:03/2030",
                  success: "true",
                },
              },
            ],
          }
        : (JSON.parse(input.body) as Parameters<typeof signItems>[0]);
    const body = JSON.stringify(signItems(parsed, input.secret));
    return {
      url: input.url,
      headers: { "content-type": "application/json", "user-agent": "Adyen HttpClient 1.0" },
      body,
      eventId: input.body === undefined ? `${input.id}:${type}:true` : undefined,
      type,
    };
  },
};
