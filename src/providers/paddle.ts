/**
 * Paddle Billing: `Paddle-Signature: ts=<seconds>;h1=<hex>[;h1=<hex>…]`, HMAC-SHA256 over
 * `{ts}:{raw body}` keyed with the notification destination's secret key (UTF-8). During a
 * secret rotation Paddle sends one `h1` per valid secret.
 */

import { signedWithTolerance } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { keyValueList } from "./body.ts";
import { decodeHex, hmac } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import { findMatchingSecret, requireHeader, requireSecrets, utf8Secret } from "./match.ts";
import { checkTimestamp, checkTolerance, parseTimestampSeconds } from "./timestamps.ts";
import type { IdentitySpec, ProviderScheme, Verified } from "./types.ts";

/**
 * Options of the Paddle scheme.
 *
 * @example
 * ```ts
 * const options: PaddleOptions = { toleranceMs: 5_000 };
 * ```
 */
export interface PaddleOptions {
  /**
   * How far `ts` may be from now, both ways, in ms. Default 5 000, what Paddle's SDK allows;
   * raise it if the clocks of hookinbox's hosts are not tightly synchronised.
   */
  readonly toleranceMs?: number;
}

const HEADER = "paddle-signature";

/**
 * Where a Paddle Billing event's identity lives: `event_id` (stable across retries; the
 * `notification_id` changes on replay), `event_type`, `occurred_at`, the entity `data.id` as
 * ordering key and its `data.updated_at` as version.
 *
 * @example
 * ```ts
 * paddleIdentity.id; // "$.event_id"
 * ```
 */
export const paddleIdentity: IdentitySpec = Object.freeze({
  id: "$.event_id",
  type: "$.event_type",
  occurredAt: "$.occurred_at",
  orderingKey: "$.data.id",
  version: "$.data.updated_at",
});

function parsePaddleHeader(header: string): { timestamp: string; signatures: Buffer[] } {
  let timestamp: string | undefined;
  let sawH1 = false;
  let sawOther = false;
  const signatures: Buffer[] = [];
  for (const [key, value] of keyValueList(header, ";", HEADER)) {
    if (key === "ts") {
      if (timestamp !== undefined) {
        throw hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", `more than one ts in ${HEADER}`);
      }
      timestamp = value;
    } else if (key === "h1") {
      sawH1 = true;
      const bytes = decodeHex(value);
      if (bytes !== undefined) signatures.push(bytes);
    } else {
      sawOther = true;
    }
  }
  if (!sawH1) {
    throw sawOther
      ? hookinboxError("HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED", "expected an h1 signature")
      : hookinboxError("HOOKINBOX_SIGNATURE_MALFORMED", `no signature in ${HEADER}`);
  }
  if (timestamp === undefined) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MISSING", `expected ts= in ${HEADER}`);
  }
  return { timestamp, signatures };
}

/**
 * The Paddle Billing scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. header absent or blank → HOOKINBOX_SIGNATURE_MISSING;
 * 3. a `;`-separated item that is not `key=value`, or a repeated `ts` →
 *    HOOKINBOX_SIGNATURE_MALFORMED; unknown keys are ignored; no `h1` →
 *    HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED when other keys are present, else
 *    HOOKINBOX_SIGNATURE_MALFORMED;
 * 4. no `ts` → HOOKINBOX_TIMESTAMP_MISSING; not canonical integer seconds →
 *    HOOKINBOX_TIMESTAMP_MALFORMED;
 * 5. every active secret × every `h1` (non-hex values match nothing); no match →
 *    HOOKINBOX_SIGNATURE_MISMATCH;
 * 6. then the window (default 5 s, both ways): HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE.
 *
 * @example
 * ```ts
 * const scheme = paddleScheme({ toleranceMs: 5_000 });
 * scheme.verifier.verify(request, [{ index: 0, value: "pdl_ntfset_…" }], Date.now());
 * ```
 */
export function paddleScheme(options: PaddleOptions = {}): ProviderScheme {
  const toleranceMs = checkTolerance(options.toleranceMs ?? 5_000);
  return {
    provider: "paddle",
    identity: paddleIdentity,
    verifier: {
      verify(request, secrets, nowMs): Verified {
        requireSecrets(secrets);
        const { timestamp, signatures } = parsePaddleHeader(requireHeader(request.headers, HEADER));
        const signedAt = parseTimestampSeconds(timestamp);
        const secretIndex = findMatchingSecret(
          secrets,
          utf8Secret,
          (key) => hmac("sha256", key, [timestamp, ":", request.body]),
          signatures,
        );
        checkTimestamp(signedAt, nowMs, toleranceMs);
        return { secretIndex, signedAt };
      },
    },
  };
}

/**
 * A Paddle Billing source (`Paddle-Signature`). Returns `{ provider: "paddle", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { paddle: paddle({ secrets: [{ env: "PADDLE_SECRET" }] }) }
 * ```
 */
export const paddle = defineProvider({
  name: "paddle",
  options: signedWithTolerance,
  identity: paddleIdentity,
  docs: "#paddle-billing",
  headers: { signature: ["paddle-signature"] },
  scheme: (_source, context) => paddleScheme(context.window),
});
