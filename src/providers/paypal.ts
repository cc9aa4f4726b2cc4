/**
 * PayPal webhooks: `PAYPAL-TRANSMISSION-SIG` (base64) is an RSA SHA-256 signature over
 * `{PAYPAL-TRANSMISSION-ID}|{PAYPAL-TRANSMISSION-TIME}|{webhook id}|{CRC32 of the raw body, as an
 * unsigned decimal}`, checked with the certificate at `PAYPAL-CERT-URL`, which must be HTTPS on
 * PayPal's API hosts (anything else is refused before any network call). The webhook id comes
 * from the config: it binds the signature to your webhook.
 */

import { z } from "zod";
import { duration, unsigned } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { asBuffer, decodeBase64 } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import {
  certificateSource,
  type KeyFetchOptions,
  type KeyUrlRule,
  rsaSignatureValid,
} from "./keys/index.ts";
import { requireHeader, requireTimestampHeader } from "./match.ts";
import { checkTimestamp, checkTolerance } from "./timestamps.ts";
import type { AsyncVerifier, IdentitySpec, ProviderScheme } from "./types.ts";

/**
 * Options of the PayPal scheme.
 *
 * @example
 * ```ts
 * const options: PaypalOptions = { webhookIds: ["1JE4291016473214C"] };
 * ```
 */
export interface PaypalOptions {
  /** The webhook ids (dashboard → app → webhooks) this source accepts; several while you move. */
  readonly webhookIds: readonly string[];
  /**
   * How far `PAYPAL-TRANSMISSION-TIME` may be from now, both ways, in ms. Default `Infinity`:
   * PayPal documents no window.
   */
  readonly toleranceMs?: number;
  /** Fetching and caching PayPal's certificates (tests inject a fetcher). */
  readonly keys?: KeyFetchOptions;
}

/** Where PayPal signing certificates may be fetched from (live and sandbox APIs). */
export const paypalCertificateRule: KeyUrlRule = Object.freeze({
  host: /^api(-m)?(\.sandbox)?\.paypal\.com$/,
  path: /^\/v1\/notifications\/certs\/[A-Za-z0-9._-]+$/,
});

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/**
 * CRC-32 (IEEE 802.3, as zlib) of the bytes, unsigned.
 *
 * @example
 * ```ts
 * crc32(new TextEncoder().encode("123456789")); // 3421780262 (0xcbf43926)
 * ```
 */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = (CRC_TABLE[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * The string PayPal signs for one webhook id.
 *
 * @example
 * ```ts
 * paypalSignedString("t-id", "2026-11-30T12:00:00Z", "1JE42…", body); // "t-id|2026-…|1JE42…|3421780262"
 * ```
 */
export function paypalSignedString(
  transmissionId: string,
  transmissionTime: string,
  webhookId: string,
  body: Uint8Array,
): string {
  return `${transmissionId}|${transmissionTime}|${webhookId}|${crc32(body)}`;
}

/**
 * Where a PayPal event's identity lives: its `id` (`WH-…`, kept on retries), `event_type`,
 * `create_time`, and the resource (`resource.id`) as ordering key.
 *
 * @example
 * ```ts
 * paypalIdentity.id; // "$.id"
 * ```
 */
export const paypalIdentity: IdentitySpec = Object.freeze({
  id: "$.id",
  type: "$.event_type",
  occurredAt: "$.create_time",
  orderingKey: "$.resource.id",
});

/**
 * The PayPal scheme. Verification, in order:
 * 1. `paypal-transmission-sig`, `-id` or `paypal-cert-url` absent or blank →
 *    HOOKINBOX_SIGNATURE_MISSING; `paypal-transmission-time` absent → HOOKINBOX_TIMESTAMP_MISSING;
 *    `paypal-auth-algo` present and not `SHA256withRSA` → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED;
 * 2. the certificate URL not HTTPS on PayPal's API hosts → HOOKINBOX_KEY_URL_NOT_ALLOWED (nothing
 *    fetched); cannot be fetched in time → HOOKINBOX_KEY_UNAVAILABLE (503); no such or expired
 *    certificate → HOOKINBOX_KEY_UNKNOWN;
 * 3. the signature (not canonical base64: matches nothing) for each configured webhook id →
 *    HOOKINBOX_SIGNATURE_MISMATCH;
 * 4. with a finite window: the transmission time not a date → HOOKINBOX_TIMESTAMP_MALFORMED,
 *    outside → HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE.
 * Uses no secret (`usesSecrets: false`).
 *
 * @example
 * ```ts
 * const scheme = paypalScheme({ webhookIds: ["1JE4291016473214C"] });
 * await scheme.verifier.verify(request, [], Date.now());
 * ```
 */
export function paypalScheme(options: PaypalOptions): ProviderScheme<AsyncVerifier> {
  const webhookIds = [...new Set(options.webhookIds)];
  if (webhookIds.length === 0) throw new Error("a PayPal source needs its webhook id");
  const toleranceMs = checkTolerance(options.toleranceMs ?? Number.POSITIVE_INFINITY);
  const certificate = certificateSource([paypalCertificateRule], options.keys);
  return {
    provider: "paypal",
    identity: paypalIdentity,
    usesSecrets: false,
    verifier: {
      async verify(request, _secrets, nowMs) {
        const { headers } = request;
        const signatureText = requireHeader(headers, "paypal-transmission-sig");
        const transmissionId = requireHeader(headers, "paypal-transmission-id");
        const transmissionTime = requireTimestampHeader(headers, "paypal-transmission-time");
        const certUrl = requireHeader(headers, "paypal-cert-url");
        const algorithm = headers.get("paypal-auth-algo")?.trim();
        if (algorithm !== undefined && algorithm !== "SHA256withRSA") {
          throw hookinboxError(
            "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
            "expected paypal-auth-algo SHA256withRSA",
          );
        }
        const key = await certificate(certUrl, nowMs);
        const signature = decodeBase64(signatureText);
        const body = asBuffer(request.body);
        const matched =
          signature !== undefined &&
          webhookIds.some((id) =>
            rsaSignatureValid(
              "sha256",
              Buffer.from(paypalSignedString(transmissionId, transmissionTime, id, body)),
              key,
              signature,
            ),
          );
        if (!matched) throw hookinboxError("HOOKINBOX_SIGNATURE_MISMATCH");
        if (toleranceMs === Number.POSITIVE_INFINITY) return { secretIndex: null };
        const signedAt = Date.parse(transmissionTime);
        if (!/^\d{4}-\d\d-\d\dT/.test(transmissionTime) || Number.isNaN(signedAt)) {
          throw hookinboxError("HOOKINBOX_TIMESTAMP_MALFORMED", "expected an ISO 8601 time");
        }
        checkTimestamp(signedAt, nowMs, toleranceMs);
        return { secretIndex: null, signedAt };
      },
    },
  };
}

/**
 * A PayPal source (certificate-signed transmissions for the named webhook). Returns `{ provider: "paypal", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { paypal: paypal({ webhookIds: ["1JE4291016473214C"] }) }
 * ```
 */
export const paypal = defineProvider({
  name: "paypal",
  options: {
    // Verified with PayPal's certificates: the webhook id is the binding.
    ...unsigned,
    webhookIds: z
      .array(z.string().regex(/^[A-Za-z0-9-]{1,64}$/, { message: "expected a PayPal webhook id" }))
      .min(1, "a PayPal source needs its webhook id (fail closed)"),
    tolerance: duration.optional(),
  },
  identity: paypalIdentity,
  docs: "#paypal",
  headers: {
    signature: [
      "paypal-transmission-sig",
      "paypal-transmission-id",
      "paypal-transmission-time",
      "paypal-cert-url",
      "paypal-auth-algo",
    ],
  },
  scheme: (source, context) =>
    paypalScheme({ webhookIds: source.webhookIds, ...context.window, keys: context.keys }),
});
