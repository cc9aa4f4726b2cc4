/**
 * Mercado Pago: `x-signature: ts=<ts>,v1=<hex>` and `x-request-id`; `v1` is the HMAC-SHA256,
 * keyed with the application's webhook secret (UTF-8), of the manifest
 * `id:{data.id};request-id:{x-request-id};ts:{ts};` where `data.id` is the query parameter of
 * the notification URL, lowercased; a part whose value is absent is left out entirely.
 */

import { signedWithTolerance } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { keyValueList, queryParams } from "./body.ts";
import { decodeHex, hmac } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import {
  findMatchingSecret,
  readHeader,
  requireHeader,
  requireSecrets,
  utf8Secret,
} from "./match.ts";
import { checkTimestamp, checkTolerance, parseTimestamp } from "./timestamps.ts";
import type { IdentitySpec, ProviderScheme, SignedRequest, Verified } from "./types.ts";

/**
 * Options of the Mercado Pago scheme.
 *
 * @example
 * ```ts
 * const options: MercadoPagoOptions = { toleranceMs: 300_000 };
 * ```
 */
export interface MercadoPagoOptions {
  /**
   * How far `ts` may be from now, both ways, in ms. Default `Infinity` (no window): Mercado
   * Pago documents none and examples show `ts` both in seconds and in milliseconds. With a
   * finite window `ts` must be canonical digits: up to 11 are seconds, 12 to 14 milliseconds.
   */
  readonly toleranceMs?: number;
}

const HEADER = "x-signature";
const REQUEST_ID_HEADER = "x-request-id";

/**
 * Where a Mercado Pago notification's identity lives: its `id`, the `action` as type
 * (`payment.updated`), `date_created`, and the resource `data.id` as ordering key.
 *
 * @example
 * ```ts
 * mercadoPagoIdentity.id; // "$.id"
 * ```
 */
export const mercadoPagoIdentity: IdentitySpec = Object.freeze({
  id: "$.id",
  type: "$.action",
  occurredAt: "$.date_created",
  orderingKey: "$.data.id",
});

/**
 * The manifest Mercado Pago signs for a request and a `ts`.
 *
 * @example
 * ```ts
 * mercadoPagoManifest({ url: "/wh?data.id=ABC", headers }, "1704908010");
 * // "id:abc;request-id:bb56a2f1-…;ts:1704908010;"
 * ```
 */
export function mercadoPagoManifest(
  request: Pick<SignedRequest, "url" | "headers">,
  ts: string,
): string {
  const dataId = queryParams(request.url).get("data.id");
  const requestId = readHeader(request.headers, REQUEST_ID_HEADER);
  let manifest = "";
  if (dataId !== null && dataId !== "") manifest += `id:${dataId.toLowerCase()};`;
  if (requestId !== undefined) manifest += `request-id:${requestId};`;
  return `${manifest}ts:${ts};`;
}

function parseMercadoPagoHeader(header: string): { ts: string; signatures: Buffer[] } {
  let ts: string | undefined;
  let sawV1 = false;
  let sawOther = false;
  const signatures: Buffer[] = [];
  for (const [key, value] of keyValueList(header, ",", HEADER)) {
    if (key === "ts") {
      if (ts !== undefined) {
        throw hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", `more than one ts in ${HEADER}`);
      }
      ts = value;
    } else if (key === "v1") {
      sawV1 = true;
      const bytes = decodeHex(value);
      if (bytes !== undefined) signatures.push(bytes);
    } else {
      sawOther = true;
    }
  }
  if (!sawV1) {
    throw sawOther
      ? hookinboxError("HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED", "expected a v1 signature")
      : hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", `no signature in ${HEADER}`);
  }
  if (ts === undefined || ts === "") {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MISSING", `expected ts= in ${HEADER}`);
  }
  return { ts, signatures };
}

/**
 * The Mercado Pago scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. `x-signature` absent or blank → HOOKINBOX_SIGNATURE_MISSING;
 * 3. a `,`-separated item that is not `key=value`, or a repeated `ts` →
 *    HOOKINBOX_SIGNATURE_MALFORMED; no `v1` → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED when
 *    other keys are present, else HOOKINBOX_SIGNATURE_MALFORMED; no `ts` →
 *    HOOKINBOX_TIMESTAMP_MISSING; with a finite window, `ts` not canonical digits →
 *    HOOKINBOX_TIMESTAMP_MALFORMED;
 * 4. every active secret × every `v1` over the manifest (see {@link mercadoPagoManifest});
 *    non-hex values match nothing; no match → HOOKINBOX_SIGNATURE_MISMATCH;
 * 5. then the window, when finite: HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE.
 *
 * @example
 * ```ts
 * const scheme = mercadoPagoScheme();
 * scheme.verifier.verify(request, [{ index: 0, value: "webhook secret" }], Date.now());
 * ```
 */
export function mercadoPagoScheme(options: MercadoPagoOptions = {}): ProviderScheme {
  const toleranceMs = checkTolerance(options.toleranceMs ?? Number.POSITIVE_INFINITY);
  const windowed = toleranceMs !== Number.POSITIVE_INFINITY;
  return {
    provider: "mercadopago",
    identity: mercadoPagoIdentity,
    verifier: {
      verify(request, secrets, nowMs): Verified {
        requireSecrets(secrets);
        const { ts, signatures } = parseMercadoPagoHeader(requireHeader(request.headers, HEADER));
        const signedAt = windowed ? parseTimestamp(ts, ts.length > 11 ? "ms" : "s") : undefined;
        const manifest = mercadoPagoManifest(request, ts);
        const secretIndex = findMatchingSecret(
          secrets,
          utf8Secret,
          (key) => hmac("sha256", key, [manifest]),
          signatures,
        );
        if (signedAt === undefined) return { secretIndex };
        checkTimestamp(signedAt, nowMs, toleranceMs);
        return { secretIndex, signedAt };
      },
    },
  };
}

/**
 * A Mercado Pago source (`x-signature`). Returns `{ provider: "mercadopago", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { mercadopago: mercadopago({ secrets: [{ env: "MP_SECRET" }] }) }
 * ```
 */
export const mercadopago = defineProvider({
  name: "mercadopago",
  options: signedWithTolerance,
  identity: mercadoPagoIdentity,
  docs: "#mercado-pago",
  headers: { signature: ["x-signature", "x-request-id"] },
  scheme: (_source, context) => mercadoPagoScheme(context.window),
});
