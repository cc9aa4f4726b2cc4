/**
 * HubSpot. Two generations of signature, both keyed with the app's client secret:
 * - v3: `X-HubSpot-Signature-v3: <base64>` = HMAC-SHA256 over
 *   `{method}{uri}{raw body}{X-HubSpot-Request-Timestamp}`, the timestamp in ms since the epoch;
 * - v1/v2: `X-HubSpot-Signature: <hex>` with `X-HubSpot-Signature-Version`, a plain SHA-256
 *   (not an HMAC) of `{secret}{raw body}` (v1) or `{secret}{method}{uri}{raw body}` (v2).
 * `uri` is the full public URL HubSpot called (`publicUrl` + path and query as received).
 *
 * Webhook bodies are batches (a JSON array of up to 100 events): `split` makes one event per
 * element, and the identity preset reads one element (see {@link hubspotEventKey}).
 */

import { createHash } from "node:crypto";
import { z } from "zod";
import { duration, publicUrl, signed } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { checkPublicUrl, field, fullUrl, scalarText } from "./body.ts";
import { decodeBase64, decodeHex, hmac } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import {
  findMatchingSecret,
  findMatchingSecretAmong,
  readHeader,
  requireSecrets,
  requireTimestampHeader,
  utf8Secret,
} from "./match.ts";
import { splitJson } from "./split.ts";
import { checkTimestamp, checkTolerance, parseTimestamp } from "./timestamps.ts";
import type { IdentityContext, IdentitySpec, ProviderScheme, Verified } from "./types.ts";

/**
 * Options of the HubSpot scheme.
 *
 * @example
 * ```ts
 * const options: HubspotOptions = { publicUrl: "https://hooks.example.com", toleranceMs: 300_000 };
 * ```
 */
export interface HubspotOptions {
  /** The public base URL HubSpot calls; the request's path and query are appended (v2, v3). */
  readonly publicUrl: string;
  /** How far the v3 timestamp may be from now, both ways, in ms. Default 300 000 (HubSpot's). */
  readonly toleranceMs?: number;
  /**
   * Accept v1/v2 signatures (no timestamp, so replayable) when no v3 header is present.
   * Default true: HubSpot documents v1 for CRM object webhooks. When a v3 header is present
   * only v3 is checked.
   */
  readonly allowLegacy?: boolean;
}

const V3_HEADER = "x-hubspot-signature-v3";
const TIMESTAMP_HEADER = "x-hubspot-request-timestamp";
const LEGACY_HEADER = "x-hubspot-signature";
const VERSION_HEADER = "x-hubspot-signature-version";

/**
 * The characters HubSpot's v3 instructions say to decode in the URI before signing (and only
 * those: `%20`, `%26`, `%3D`… stay encoded): `: / ? @ ! $ ' ( ) * , ;`.
 */
const V3_DECODED = /%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi;

/**
 * Decodes, in a URI, exactly the escapes HubSpot's v3 validation decodes (`%3A` `:`, `%2F` `/`,
 * `%3F` `?`, `%40` `@`, `%21` `!`, `%24` `$`, `%27` `'`, `%28` `(`, `%29` `)`, `%2A` `*`, `%2C`
 * `,`, `%3B` `;`, either case); everything else is left as received.
 *
 * @example
 * ```ts
 * hubspotDecodeUri("https://h.example/w?next=%2Fa%3Fb%20c"); // "https://h.example/w?next=/a?b%20c"
 * ```
 */
export function hubspotDecodeUri(uri: string): string {
  return uri.replace(V3_DECODED, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** Property values longer than this are keyed by a digest so a key stays short. */
const MAX_VALUE_IN_KEY = 64;

function keyPart(value: unknown): string | undefined {
  if (typeof value === "boolean") return String(value);
  return scalarText(value);
}

/**
 * The HubSpot dedup key of one batch item. HubSpot documents that `eventId` is NOT guaranteed
 * unique, and a retry carries a new `attemptNumber`, so neither the body bytes nor `eventId` can
 * be the key. An item is identified by what happened instead:
 * `<portalId>:<subscriptionType>:<object>:<occurredAt>` where `<object>` is `objectId`, or
 * `<fromObjectId>><toObjectId>` for association changes; `occurredAt` (ms) is the time of the
 * change and identical on retries. Suffixes: property changes add `:<propertyName>=<propertyValue>`
 * (one save can change several properties of one object at one instant; values over 64
 * characters are replaced by `sha256:<first 32 hex of their SHA-256>` to keep keys short);
 * association changes add `:<associationType>:added|removed`. Items without `portalId`,
 * `subscriptionType` or `occurredAt` fall back to `event:<eventId>`.
 *
 * @example
 * ```ts
 * hubspotEventKey(ctx); // "62515:contact.propertyChange:123:1564113600000:email=a@b.example"
 * ```
 */
export function hubspotEventKey(context: IdentityContext): string | undefined {
  const item = context.json();
  const portal = keyPart(field(item, "portalId"));
  const type = keyPart(field(item, "subscriptionType"));
  const at = keyPart(field(item, "occurredAt"));
  if (portal === undefined || type === undefined || at === undefined) {
    const eventId = keyPart(field(item, "eventId"));
    return eventId === undefined ? undefined : `event:${eventId}`;
  }
  const from = keyPart(field(item, "fromObjectId"));
  const to = keyPart(field(item, "toObjectId"));
  const object =
    keyPart(field(item, "objectId")) ?? (from !== undefined ? `${from}>${to ?? ""}` : "");
  let key = `${portal}:${type}:${object}:${at}`;
  const property = keyPart(field(item, "propertyName"));
  if (property !== undefined) {
    const raw = field(item, "propertyValue");
    let value = typeof raw === "string" ? raw : (keyPart(raw) ?? "");
    if (value.length > MAX_VALUE_IN_KEY) {
      value = `sha256:${createHash("sha256").update(value).digest("hex").slice(0, 32)}`;
    }
    key += `:${property}=${value}`;
  }
  const association = keyPart(field(item, "associationType"));
  if (association !== undefined) {
    key += `:${association}:${field(item, "associationRemoved") === true ? "removed" : "added"}`;
  }
  return key;
}

/**
 * The HubSpot ordering key of one item: `<portalId>:<object type>:<objectId>` (the object type
 * is the `subscriptionType` before its first dot: `contact`, `deal`…), so changes to one record
 * are delivered in order.
 *
 * @example
 * ```ts
 * hubspotOrderingKey(ctx); // "62515:contact:123"
 * ```
 */
export function hubspotOrderingKey(context: IdentityContext): string | undefined {
  const item = context.json();
  const portal = keyPart(field(item, "portalId"));
  const type = keyPart(field(item, "subscriptionType"));
  const object = keyPart(field(item, "objectId")) ?? keyPart(field(item, "fromObjectId"));
  if (portal === undefined || type === undefined || object === undefined) return undefined;
  return `${portal}:${type.split(".")[0]}:${object}`;
}

/**
 * Where a HubSpot item's identity lives (read from ONE batch item): {@link hubspotEventKey},
 * `subscriptionType`, `occurredAt` (ms, also the version) and {@link hubspotOrderingKey}.
 *
 * @example
 * ```ts
 * hubspotIdentity.type; // "$.subscriptionType"
 * ```
 */
export const hubspotIdentity: IdentitySpec = Object.freeze({
  id: hubspotEventKey,
  type: "$.subscriptionType",
  occurredAt: "$.occurredAt",
  orderingKey: hubspotOrderingKey,
  version: "$.occurredAt",
});

/**
 * The HubSpot scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. with `x-hubspot-signature-v3`: `x-hubspot-request-timestamp` absent →
 *    HOOKINBOX_TIMESTAMP_MISSING, not canonical integer ms → HOOKINBOX_TIMESTAMP_MALFORMED;
 *    every active secret over the URI with HubSpot's escapes decoded (see
 *    {@link hubspotDecodeUri}) and, when different, as received; a value that is not canonical
 *    base64 matches nothing; no match → HOOKINBOX_SIGNATURE_MISMATCH; then the window (default
 *    300 000 ms, both ways) → HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE;
 * 3. else with `x-hubspot-signature`: `allowLegacy` off → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED;
 *    `x-hubspot-signature-version` absent → HOOKINBOX_SIGNATURE_MISSING, not `v1`/`v2` →
 *    HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED; a digest that is not hex matches nothing; no match
 *    → HOOKINBOX_SIGNATURE_MISMATCH;
 * 4. neither header → HOOKINBOX_SIGNATURE_MISSING.
 * `split` makes one item per array element (a non-array JSON body is one item).
 *
 * @example
 * ```ts
 * const scheme = hubspotScheme({ publicUrl: "https://hooks.example.com" });
 * scheme.verifier.verify(request, [{ index: 0, value: "client-secret" }], Date.now());
 * const items = scheme.split?.(request); // one per event
 * ```
 */
export function hubspotScheme(options: HubspotOptions): ProviderScheme {
  const base = checkPublicUrl(options.publicUrl, "publicUrl");
  const toleranceMs = checkTolerance(options.toleranceMs ?? 300_000);
  const allowLegacy = options.allowLegacy !== false;
  return {
    provider: "hubspot",
    identity: hubspotIdentity,
    split: (request) => splitJson(request.body, []),
    verifier: {
      verify(request, secrets, nowMs): Verified {
        requireSecrets(secrets);
        const { headers, method, body } = request;
        const uri = fullUrl(base, request.url);
        const v3 = readHeader(headers, V3_HEADER);
        if (v3 !== undefined) {
          const timestamp = requireTimestampHeader(headers, TIMESTAMP_HEADER);
          const signedAt = parseTimestamp(timestamp, "ms");
          const signature = decodeBase64(v3);
          const decoded = hubspotDecodeUri(uri);
          const uris = decoded === uri ? [uri] : [decoded, uri];
          const secretIndex = findMatchingSecretAmong(
            secrets,
            utf8Secret,
            (key) => uris.map((u) => hmac("sha256", key, [method, u, body, timestamp])),
            signature === undefined ? [] : [signature],
          );
          checkTimestamp(signedAt, nowMs, toleranceMs);
          return { secretIndex, signedAt };
        }
        const legacy = readHeader(headers, LEGACY_HEADER);
        if (legacy === undefined) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", `expected header ${V3_HEADER}`);
        }
        if (!allowLegacy) {
          throw hookinboxError(
            "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
            `only ${LEGACY_HEADER} is present and allowLegacy is off`,
          );
        }
        const version = readHeader(headers, VERSION_HEADER);
        if (version === undefined) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", `expected header ${VERSION_HEADER}`);
        }
        if (version !== "v1" && version !== "v2") {
          throw hookinboxError(
            "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
            `expected v1 or v2 in ${VERSION_HEADER}`,
          );
        }
        const digest = decodeHex(legacy);
        const parts = version === "v1" ? [body] : [method, uri, body];
        const secretIndex = findMatchingSecret(
          secrets,
          utf8Secret,
          (key) => {
            const hash = createHash("sha256").update(key);
            for (const part of parts) hash.update(part);
            return hash.digest();
          },
          digest === undefined ? [] : [digest],
        );
        return { secretIndex };
      },
    },
  };
}

/**
 * A HubSpot source (v3, v1/v2; batches split per item). Returns `{ provider: "hubspot", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { hubspot: hubspot({ secrets: [{ env: "HUBSPOT_CLIENT_SECRET" }] }) }
 * ```
 */
export const hubspot = defineProvider({
  name: "hubspot",
  options: {
    ...signed,
    publicUrl: publicUrl.optional(),
    tolerance: duration.optional(),
    allowLegacy: z.boolean().optional(),
  },
  identity: hubspotIdentity,
  docs: "#hubspot",
  headers: {
    signature: [
      "x-hubspot-signature-v3",
      "x-hubspot-signature",
      "x-hubspot-signature-version",
      "x-hubspot-request-timestamp",
    ],
  },
  scheme: (source, context) =>
    hubspotScheme({
      publicUrl: context.publicUrl(
        source.publicUrl,
        "publicUrl",
        "HubSpot signs the public URL it calls",
      ),
      ...context.window,
      ...(source.allowLegacy === undefined ? {} : { allowLegacy: source.allowLegacy }),
    }),
});
