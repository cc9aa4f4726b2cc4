/**
 * Standard Webhooks (Svix, Clerk, Resend, …): `webhook-id`, `webhook-timestamp` and
 * `webhook-signature: v1,<base64> [v1,<base64> …]`, HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{raw body}`, keyed with the base64-decoded secret.
 * Svix's `svix-id` / `svix-timestamp` / `svix-signature` are accepted as aliases.
 */

import { signedWithTolerance } from "../config/source-fields.ts";
import { hookinboxError, isHookinboxError } from "../errors.js";
import { decodeBase64, hmac, memoizeKeys } from "./crypto.js";
import { defineProvider } from "./definition.ts";
import { findMatchingSecret, readHeader, requireSecrets } from "./match.js";
import { checkTimestamp, checkTolerance, parseTimestampSeconds } from "./timestamps.js";
import type {
  HeaderReader,
  IdentityContext,
  IdentitySpec,
  ProviderScheme,
  Verified,
} from "./types.js";

/**
 * Options of the Standard Webhooks scheme.
 *
 * @example
 * ```ts
 * const options: StandardWebhooksOptions = { toleranceMs: 300_000 };
 * ```
 */
export interface StandardWebhooksOptions {
  /** How far `webhook-timestamp` may be from now, both ways, in ms (the spec suggests 5 min). */
  readonly toleranceMs: number;
}

const SECRET_PREFIX = "whsec_";

/** Reads `webhook-<name>`, falling back to `svix-<name>` when absent (per header). */
function aliased(
  headers: HeaderReader,
  name: "id" | "timestamp" | "signature",
): string | undefined {
  return readHeader(headers, `webhook-${name}`) ?? readHeader(headers, `svix-${name}`);
}

/**
 * Decodes a Standard Webhooks secret the way the reference library does: strip a leading
 * `whsec_`, then base64-decode (strictly; see {@link decodeBase64}). A secret without the
 * prefix is decoded too. Returns `undefined` for a secret that is not valid base64 or empty.
 *
 * @example
 * ```ts
 * standardWebhooksKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"); // 24-byte Buffer
 * ```
 */
export function standardWebhooksKey(secret: string): Buffer | undefined {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = decodeBase64(encoded);
  return key !== undefined && key.length > 0 ? key : undefined;
}

/**
 * The message id: `webhook-id`, or `svix-id` when absent.
 *
 * @example
 * ```ts
 * standardWebhooksId(ctx); // "msg_p5jXN8AQM9LWM0D4loKWxJek"
 * ```
 */
export function standardWebhooksId(context: IdentityContext): string | undefined {
  return aliased(context.headers, "id");
}

/**
 * When the event occurred, as an ISO 8601 string: the body's `timestamp` when it is a string
 * (the spec's payload shape), else the signed `webhook-timestamp` (seconds) converted to ISO.
 * A non-JSON body falls back to the header.
 *
 * @example
 * ```ts
 * standardWebhooksOccurredAt(ctx); // "2021-02-25T15:02:10.000Z"
 * ```
 */
export function standardWebhooksOccurredAt(context: IdentityContext): string | undefined {
  let body: unknown;
  try {
    body = context.json();
  } catch (error) {
    if (!isHookinboxError(error, "HOOKINBOX_BODY_INVALID_JSON")) throw error;
  }
  if (typeof body === "object" && body !== null) {
    const timestamp = (body as Record<string, unknown>).timestamp;
    if (typeof timestamp === "string" && timestamp !== "") return timestamp;
  }
  const header = aliased(context.headers, "timestamp");
  if (header === undefined || !/^[0-9]{1,11}$/.test(header)) return undefined;
  return new Date(Number(header) * 1000).toISOString();
}

/**
 * Where a Standard Webhooks event's identity lives: the message id header (stable across
 * retries), the body's `type`, and the occurrence time. No ordering key or version is common
 * to all senders; a source sets them when its payloads have one.
 *
 * @example
 * ```ts
 * standardWebhooksIdentity.type; // "$.type"
 * ```
 */
export const standardWebhooksIdentity: IdentitySpec = Object.freeze({
  id: standardWebhooksId,
  type: "$.type",
  occurredAt: standardWebhooksOccurredAt,
});

/**
 * The Standard Webhooks scheme. Each of `id`, `timestamp` and `signature` is read from its
 * `webhook-*` header, or from the `svix-*` alias when that header is absent. Verification,
 * in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. no signature header → HOOKINBOX_SIGNATURE_MISSING; no `webhook-id` →
 *    HOOKINBOX_SIGNATURE_MISSING too (detail "webhook-id header is missing"): the id is part
 *    of what is signed, so without it there is no verifiable signature, and an identity error
 *    must not be raised before the request is authenticated;
 * 3. no timestamp → HOOKINBOX_TIMESTAMP_MISSING; not canonical integer seconds →
 *    HOOKINBOX_TIMESTAMP_MALFORMED;
 * 4. the signature list is split on spaces; an entry without a comma →
 *    HOOKINBOX_SIGNATURE_MALFORMED; entries tagged other than `v1` (`v1a` Ed25519, `v2`, …)
 *    are ignored, and when none is `v1` → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED;
 * 5. every active secret × every `v1`; a value that is not canonical base64 (truncated…)
 *    matches nothing; no match → HOOKINBOX_SIGNATURE_MISMATCH. Secrets that do not decode
 *    are skipped; if none decodes → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 6. only then the window: HOOKINBOX_TIMESTAMP_TOO_OLD / HOOKINBOX_TIMESTAMP_IN_FUTURE.
 *
 * @example
 * ```ts
 * const scheme = standardWebhooksScheme({ toleranceMs: 300_000 });
 * scheme.verifier.verify(request, [{ index: 0, value: "whsec_…" }], Date.now());
 * ```
 */
export function standardWebhooksScheme(options: StandardWebhooksOptions): ProviderScheme {
  const toleranceMs = checkTolerance(options.toleranceMs);
  const keyOf = memoizeKeys(standardWebhooksKey);
  return {
    provider: "standard-webhooks",
    identity: standardWebhooksIdentity,
    verifier: {
      verify(request, secrets, nowMs): Verified {
        requireSecrets(secrets);
        const { headers } = request;
        const signatureHeader = aliased(headers, "signature");
        if (signatureHeader === undefined) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", "expected header webhook-signature");
        }
        const id = aliased(headers, "id");
        if (id === undefined) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", "webhook-id header is missing");
        }
        const timestamp = aliased(headers, "timestamp");
        if (timestamp === undefined) {
          throw hookinboxError("HOOKINBOX_TIMESTAMP_MISSING", "expected header webhook-timestamp");
        }
        const signedAt = parseTimestampSeconds(timestamp);
        const signatures = parseSignatureList(signatureHeader);
        const secretIndex = findMatchingSecret(
          secrets,
          keyOf,
          (key) => hmac("sha256", key, [id, ".", timestamp, ".", request.body]),
          signatures,
        );
        checkTimestamp(signedAt, nowMs, toleranceMs);
        return { secretIndex, signedAt };
      },
    },
  };
}

function parseSignatureList(header: string): Buffer[] {
  const signatures: Buffer[] = [];
  let sawV1 = false;
  for (const entry of header.split(" ")) {
    if (entry === "") continue; // tolerate repeated spaces
    const comma = entry.indexOf(",");
    if (comma <= 0) {
      throw hookinboxError(
        "HOOKINBOX_SIGNATURE_MALFORMED",
        "expected space-separated <version>,<signature> entries",
      );
    }
    if (comma !== 2 || !entry.startsWith("v1")) continue;
    sawV1 = true;
    const bytes = decodeBase64(entry.slice(comma + 1));
    if (bytes !== undefined) signatures.push(bytes);
  }
  if (!sawV1) {
    throw hookinboxError("HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED", "expected a v1 signature");
  }
  return signatures;
}

/**
 * A Standard Webhooks source (`webhook-*` or `svix-*` headers, `whsec_` secrets). Returns `{ provider: "standard-webhooks", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { clerk: standardWebhooks({ secrets: [{ env: "CLERK_WEBHOOK_SECRET" }] }) }
 * ```
 */
export const standardWebhooks = defineProvider({
  name: "standard-webhooks",
  options: signedWithTolerance,
  identity: standardWebhooksIdentity,
  docs: "#standard-webhooks-svix-clerk-resend-",
  // `webhook-*`, and the same three under Svix's names.
  headers: {
    signature: ["webhook", "svix"].flatMap((prefix) =>
      ["id", "timestamp", "signature"].map((name) => `${prefix}-${name}`),
    ),
  },
  scheme: (_source, context) => standardWebhooksScheme({ toleranceMs: context.toleranceMs }),
});
