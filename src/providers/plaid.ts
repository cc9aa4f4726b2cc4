/**
 * Plaid: `Plaid-Verification` is a JWT signed with ES256 whose header names the key (`kid`) and
 * whose payload holds `iat` and `request_body_sha256` (hex SHA-256 of the raw body). The key is a
 * JWK fetched from Plaid's `/webhook_verification_key/get` with the client id and API secret (the
 * source's `secrets`), cached by `kid`. Plaid sends no event id: see {@link plaidEventKey}.
 */

import { createHash, type KeyObject } from "node:crypto";
import { z } from "zod";
import { duration, signed } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { field, jsonOrUndefined, scalarText } from "./body.ts";
import { asBuffer, constantTimeEqual, decodeHex } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import { jwsSignatureValid, numericClaim, parseJws, requireAlgorithm } from "./jwt.ts";
import {
  defaultKeyTimeoutMs,
  fetchKeyText,
  httpKeyFetcher,
  jwkKey,
  KeyCache,
  type KeyFetchOptions,
  type KeyUrlRule,
} from "./keys/index.ts";
import { readHeader, requireHeader, requireSecrets } from "./match.ts";
import { checkTimestamp, checkTolerance } from "./timestamps.ts";
import type { AsyncVerifier, IdentityContext, IdentitySpec, ProviderScheme } from "./types.ts";

/** Plaid's API environments. */
export type PlaidEnvironment = "production" | "sandbox" | "development";

/**
 * Options of the Plaid scheme.
 *
 * @example
 * ```ts
 * const options: PlaidOptions = { clientId: "5f…", environment: "production" };
 * ```
 */
export interface PlaidOptions {
  /** The Plaid client id sent with the API secret to fetch verification keys. */
  readonly clientId: string;
  /** Which Plaid API serves the keys (default `production`). */
  readonly environment?: PlaidEnvironment;
  /** How far `iat` may be from now, both ways, in ms (default 300 000: Plaid's 5 minutes). */
  readonly toleranceMs?: number;
  /** Fetching and caching Plaid's keys (tests inject a fetcher). */
  readonly keys?: KeyFetchOptions;
}

const plaidRule: KeyUrlRule = Object.freeze({
  host: /^(production|sandbox|development)\.plaid\.com$/,
  path: /^\/webhook_verification_key\/get$/,
});

interface PlaidKey {
  readonly key: KeyObject;
  /** When Plaid retired the key (ms), or null while it is current. */
  readonly expiredAt: number | null;
}

function parsePlaidKey(text: string): PlaidKey {
  let jwk: unknown;
  try {
    jwk = field(JSON.parse(text), "key");
  } catch (error) {
    throw hookinboxError("HOOKINBOX_KEY_UNAVAILABLE", "Plaid's key answer is not JSON", error);
  }
  const key = jwkKey(jwk);
  if (key === undefined) {
    throw hookinboxError("HOOKINBOX_KEY_UNAVAILABLE", "Plaid's key answer holds no public key");
  }
  const expired = field(jwk, "expired_at");
  return { key, expiredAt: typeof expired === "number" ? expired * 1000 : null };
}

/** The claims of the verified token, read again from the header by the identity function. */
function tokenIssuedAt(context: IdentityContext): number | undefined {
  const header = readHeader(context.headers, "plaid-verification");
  if (header === undefined) return undefined;
  try {
    return numericClaim(parseJws(header).payload, "iat");
  } catch {
    return undefined;
  }
}

/**
 * Plaid's webhooks carry no event id, and a retry is signed anew. The key is
 * `<webhook_type>:<webhook_code>:<item_id>:<iat>`: what happened, to which Item, and when Plaid
 * signed this delivery. Two distinct webhooks are never merged; a delivery Plaid retries after a
 * failed answer is a second event (handlers sync by cursor, so this is harmless), which beats
 * losing a later `SYNC_UPDATES_AVAILABLE` to an earlier one's key.
 *
 * @example
 * ```ts
 * plaidEventKey(ctx); // "TRANSACTIONS:SYNC_UPDATES_AVAILABLE:wz666MBjYWTp2PDzzggYhM6oWWmBb:1700000000"
 * ```
 */
export function plaidEventKey(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  const type = scalarText(field(body, "webhook_type"));
  const code = scalarText(field(body, "webhook_code"));
  const iat = tokenIssuedAt(context);
  if (type === undefined || code === undefined || iat === undefined) return undefined;
  const subject = scalarText(field(body, "item_id")) ?? scalarText(field(body, "user_id")) ?? "";
  return `${type}:${code}:${subject}:${iat}`;
}

/**
 * Where a Plaid webhook's identity lives: {@link plaidEventKey}, `webhook_type.webhook_code` as
 * type (`TRANSACTIONS.SYNC_UPDATES_AVAILABLE`), and the Item as ordering key.
 *
 * @example
 * ```ts
 * plaidIdentity.orderingKey; // "$.item_id"
 * ```
 */
export const plaidIdentity: IdentitySpec = Object.freeze({
  id: plaidEventKey,
  type: (context: IdentityContext) => {
    const body = jsonOrUndefined(context);
    const type = scalarText(field(body, "webhook_type"));
    const code = scalarText(field(body, "webhook_code"));
    return type === undefined || code === undefined ? undefined : `${type}.${code}`;
  },
  occurredAt: (context: IdentityContext) => tokenIssuedAt(context),
  orderingKey: "$.item_id",
});

/**
 * The Plaid scheme. Verification, in order:
 * 1. no active API secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. `Plaid-Verification` absent or blank → HOOKINBOX_SIGNATURE_MISSING; not a JWT →
 *    HOOKINBOX_SIGNATURE_MALFORMED; `alg` not ES256 → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED;
 *    no `kid` → HOOKINBOX_SIGNATURE_MALFORMED;
 * 3. the key by `kid` (cached 24 h; an unknown `kid` is fetched once, with the first active
 *    secret): Plaid down or slow → HOOKINBOX_KEY_UNAVAILABLE (503); no such key, or a key Plaid
 *    has expired → HOOKINBOX_KEY_UNKNOWN;
 * 4. the signature → HOOKINBOX_SIGNATURE_MISMATCH;
 * 5. `request_body_sha256` other than the raw body's → HOOKINBOX_SIGNATURE_MISMATCH;
 * 6. `iat` absent → HOOKINBOX_TIMESTAMP_MISSING; outside the window →
 *    HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE.
 * Reports the index of the secret used to fetch keys.
 *
 * @example
 * ```ts
 * const scheme = plaidScheme({ clientId: "5f…" });
 * await scheme.verifier.verify(request, [{ index: 0, value: "<plaid secret>" }], Date.now());
 * ```
 */
export function plaidScheme(options: PlaidOptions): ProviderScheme<AsyncVerifier> {
  if (options.clientId === "") throw new Error("a Plaid source needs a clientId");
  const toleranceMs = checkTolerance(options.toleranceMs ?? 300_000);
  const url = `https://${options.environment ?? "production"}.plaid.com/webhook_verification_key/get`;
  const fetcher = options.keys?.fetcher ?? httpKeyFetcher;
  const timeoutMs = options.keys?.timeoutMs ?? defaultKeyTimeoutMs;
  const cache = new KeyCache<PlaidKey>({
    ttlMs: options.keys?.ttlMs ?? 86_400_000,
    maxEntries: options.keys?.maxEntries ?? 64,
    negativeTtlMs: 60_000,
  });
  return {
    provider: "plaid",
    identity: plaidIdentity,
    verifier: {
      async verify(request, secrets, nowMs) {
        requireSecrets(secrets);
        const secret = secrets[0];
        const token = parseJws(requireHeader(request.headers, "plaid-verification"));
        const kid = requireAlgorithm(token, "ES256");
        const plaidKey = await cache.get(kid, nowMs, async () =>
          parsePlaidKey(
            await fetchKeyText(
              fetcher,
              {
                url,
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({
                  client_id: options.clientId,
                  secret: secret?.value,
                  key_id: kid,
                }),
                timeoutMs,
              },
              [plaidRule],
            ),
          ),
        );
        if (plaidKey.expiredAt !== null && plaidKey.expiredAt <= nowMs) {
          throw hookinboxError("HOOKINBOX_KEY_UNKNOWN", "Plaid has expired this key");
        }
        if (!jwsSignatureValid(token, plaidKey.key, "ES256")) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MISMATCH");
        }
        const claimed = token.payload.request_body_sha256;
        const expected = createHash("sha256").update(asBuffer(request.body)).digest();
        const received = typeof claimed === "string" ? decodeHex(claimed) : undefined;
        if (received === undefined || !constantTimeEqual(expected, received)) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MISMATCH", "the body is not the one signed");
        }
        const iat = numericClaim(token.payload, "iat");
        if (iat === undefined) {
          throw hookinboxError("HOOKINBOX_TIMESTAMP_MISSING", "the token has no iat");
        }
        checkTimestamp(iat * 1000, nowMs, toleranceMs);
        return { secretIndex: secret?.index ?? 0, signedAt: iat * 1000 };
      },
    },
  };
}

/**
 * A Plaid source (ES256 `Plaid-Verification`; keys fetched with the API secret). Returns `{ provider: "plaid", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { plaid: plaid({ clientId: "5f…", secrets: [{ env: "PLAID_SECRET" }] }) }
 * ```
 */
export const plaid = defineProvider({
  name: "plaid",
  options: {
    ...signed,
    clientId: z.string().min(1),
    environment: z.enum(["production", "sandbox", "development"]).optional(),
    tolerance: duration.optional(),
  },
  identity: plaidIdentity,
  docs: "#plaid",
  headers: { signature: ["plaid-verification"] },
  scheme: (source, context) =>
    plaidScheme({
      clientId: source.clientId,
      environment: source.environment ?? "production",
      ...context.window,
      keys: context.keys,
    }),
});
