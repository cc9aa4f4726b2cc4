/**
 * Stripe: `Stripe-Signature: t=<seconds>,v1=<hex>[,v1=<hex>…]`, HMAC-SHA256 over `{t}.{raw body}`
 * keyed with the whole `whsec_…` string as UTF-8 (it is not decoded).
 */

import { signedWithTolerance } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.js";
import { decodeHex, hmac } from "./crypto.js";
import { defineProvider } from "./definition.ts";
import { findMatchingSecret, readHeader, requireSecrets } from "./match.js";
import { checkTimestamp, checkTolerance, parseTimestampSeconds } from "./timestamps.js";
import type { IdentitySpec, ProviderScheme, SignedRequest, Verified } from "./types.js";

/**
 * Options of the Stripe scheme.
 *
 * @example
 * ```ts
 * const options: StripeOptions = { toleranceMs: 300_000 };
 * ```
 */
export interface StripeOptions {
  /** How far the signed `t` may be from now, both ways, in ms (Stripe's SDK uses 300 000). */
  readonly toleranceMs: number;
}

const HEADER = "stripe-signature";

/**
 * Where a Stripe event's identity lives. `occurredAt` and `version` read `created`, which
 * Stripe gives in **seconds** since the epoch; `orderingKey` is the object the event is about
 * (`data.object.id`: the invoice, subscription, customer…).
 *
 * @example
 * ```ts
 * stripeIdentity.id; // "$.id"
 * ```
 */
export const stripeIdentity: IdentitySpec = Object.freeze({
  id: "$.id",
  type: "$.type",
  occurredAt: "$.created",
  orderingKey: "$.data.object.id",
  version: "$.created",
});

/**
 * The Stripe scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET (fail closed);
 * 2. header absent or blank → HOOKINBOX_SIGNATURE_MISSING;
 * 3. a comma-separated item that is not `key=value`, or a repeated `t` →
 *    HOOKINBOX_SIGNATURE_MALFORMED; unknown keys (`v0`, …) are ignored;
 * 4. no `v1` item → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED when other signature keys are
 *    present, HOOKINBOX_SIGNATURE_MALFORMED when the header carries no signature at all;
 * 5. no `t` → HOOKINBOX_TIMESTAMP_MISSING; `t` not canonical integer seconds →
 *    HOOKINBOX_TIMESTAMP_MALFORMED;
 * 6. every active secret × every `v1` is tried; a `v1` value that is not hex (truncated, odd
 *    length, other characters) simply matches nothing. No match → HOOKINBOX_SIGNATURE_MISMATCH;
 * 7. only then the window: HOOKINBOX_TIMESTAMP_TOO_OLD / HOOKINBOX_TIMESTAMP_IN_FUTURE.
 *
 * @example
 * ```ts
 * const scheme = stripeScheme({ toleranceMs: 300_000 });
 * const { secretIndex, signedAt } = scheme.verifier.verify(request, secrets, Date.now());
 * ```
 */
export function stripeScheme(options: StripeOptions): ProviderScheme {
  const toleranceMs = checkTolerance(options.toleranceMs);
  return {
    provider: "stripe",
    identity: stripeIdentity,
    verifier: {
      verify(request: SignedRequest, secrets, nowMs): Verified {
        requireSecrets(secrets);
        const header = readHeader(request.headers, HEADER);
        if (header === undefined) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", `expected header ${HEADER}`);
        }
        const { timestamp, signatures } = parseStripeHeader(header);
        const signedAt = parseTimestampSeconds(timestamp);
        const secretIndex = findMatchingSecret(
          secrets,
          nonEmpty,
          (key) => hmac("sha256", key, [timestamp, ".", request.body]),
          signatures,
        );
        checkTimestamp(signedAt, nowMs, toleranceMs);
        return { secretIndex, signedAt };
      },
    },
  };
}

function parseStripeHeader(header: string): { timestamp: string; signatures: Buffer[] } {
  let timestamp: string | undefined;
  let sawV1 = false;
  let sawOtherScheme = false;
  const signatures: Buffer[] = [];
  for (const rawItem of header.split(",")) {
    const item = rawItem.trim();
    const eq = item.indexOf("=");
    if (eq <= 0) {
      throw hookinboxError(
        "HOOKINBOX_SIGNATURE_MALFORMED",
        `expected key=value pairs in ${HEADER}`,
      );
    }
    const key = item.slice(0, eq);
    const value = item.slice(eq + 1);
    if (key === "t") {
      if (timestamp !== undefined) {
        throw hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", `more than one t in ${HEADER}`);
      }
      timestamp = value;
    } else if (key === "v1") {
      sawV1 = true;
      const bytes = decodeHex(value);
      if (bytes !== undefined) signatures.push(bytes);
    } else {
      sawOtherScheme = true;
    }
  }
  if (!sawV1) {
    throw sawOtherScheme
      ? hookinboxError("HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED", `expected a v1 signature`)
      : hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", `no signature in ${HEADER}`);
  }
  if (timestamp === undefined) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MISSING", `expected t= in ${HEADER}`);
  }
  return { timestamp, signatures };
}

function nonEmpty(secret: string): string | undefined {
  return secret.length > 0 ? secret : undefined;
}

/**
 * A Stripe source (`Stripe-Signature`, id from the body's `id`). Returns `{ provider: "stripe", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { stripe: stripe({ secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }], tolerance: "5m" }) }
 * ```
 */
export const stripe = defineProvider({
  name: "stripe",
  options: signedWithTolerance,
  identity: stripeIdentity,
  docs: "#stripe",
  headers: { signature: ["stripe-signature"] },
  scheme: (_source, context) => stripeScheme({ toleranceMs: context.toleranceMs }),
});
