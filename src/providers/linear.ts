/**
 * Linear: `Linear-Signature: <hex>`, HMAC-SHA256 over the raw body keyed with the webhook's
 * signing secret (UTF-8). The timestamp is not a header: the signed body carries
 * `webhookTimestamp` (ms since the epoch), which Linear asks receivers to check within a minute.
 */

import { signedWithTolerance } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { field, jsonOrUndefined, scalarText, utf8Text } from "./body.ts";
import { decodeHex, hmac } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import { findMatchingSecret, requireHeader, requireSecrets, utf8Secret } from "./match.ts";
import { checkTimestamp, checkTolerance, parseTimestamp } from "./timestamps.ts";
import type { IdentityContext, IdentitySpec, ProviderScheme, Verified } from "./types.ts";

/**
 * Options of the Linear scheme.
 *
 * @example
 * ```ts
 * const options: LinearOptions = { toleranceMs: 60_000 };
 * ```
 */
export interface LinearOptions {
  /** How far `webhookTimestamp` may be from now, both ways, in ms. Default 60 000 (Linear's). */
  readonly toleranceMs?: number;
}

const HEADER = "linear-signature";
/** 14 digits of milliseconds reach the year 5138; larger numbers are not timestamps. */
const MAX_MS = 99_999_999_999_999;

/**
 * The Linear event type: `<type>.<action>` (`"Issue.create"`, `"Comment.update"`), or `type`
 * alone when there is no action.
 *
 * @example
 * ```ts
 * linearEventType(ctx); // "Issue.update"
 * ```
 */
export function linearEventType(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  const type = scalarText(field(body, "type"));
  const action = scalarText(field(body, "action"));
  if (type === undefined) return undefined;
  return action === undefined ? type : `${type}.${action}`;
}

/**
 * Where a Linear event's identity lives: the `Linear-Delivery` header (one per delivery, kept
 * on retries), {@link linearEventType}, `createdAt`, the entity `data.id` as ordering key and
 * its `data.updatedAt` as version.
 *
 * @example
 * ```ts
 * linearIdentity.id; // "header:linear-delivery"
 * ```
 */
export const linearIdentity: IdentitySpec = Object.freeze({
  id: "header:linear-delivery",
  type: linearEventType,
  occurredAt: "$.createdAt",
  orderingKey: "$.data.id",
  version: "$.data.updatedAt",
});

/** The signed `webhookTimestamp` in ms; throws the timestamp codes. */
function bodyTimestamp(body: Uint8Array): number {
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8Text(body));
  } catch (error) {
    throw hookinboxError(
      "HOOKINBOX_BODY_INVALID_JSON",
      "webhookTimestamp is read from the body",
      error,
    );
  }
  const value = field(parsed, "webhookTimestamp");
  if (value === undefined || value === null) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MISSING", "expected webhookTimestamp in the body");
  }
  if (typeof value === "string") return parseTimestamp(value, "ms");
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0 || value > MAX_MS) {
    throw hookinboxError("HOOKINBOX_TIMESTAMP_MALFORMED", "expected integer milliseconds");
  }
  return value;
}

/**
 * The Linear scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. header absent or blank → HOOKINBOX_SIGNATURE_MISSING;
 * 3. every active secret; a digest that is not hex matches nothing; no match →
 *    HOOKINBOX_SIGNATURE_MISMATCH;
 * 4. only then (it is read from the now authenticated body) the timestamp: body not JSON →
 *    HOOKINBOX_BODY_INVALID_JSON; no `webhookTimestamp` → HOOKINBOX_TIMESTAMP_MISSING; not a
 *    non-negative integer of ms (number or canonical digit string) → HOOKINBOX_TIMESTAMP_MALFORMED;
 * 5. the window (default 60 s, both ways): HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE.
 *
 * @example
 * ```ts
 * const scheme = linearScheme({ toleranceMs: 60_000 });
 * scheme.verifier.verify(request, [{ index: 0, value: "lin_wh_…" }], Date.now());
 * ```
 */
export function linearScheme(options: LinearOptions = {}): ProviderScheme {
  const toleranceMs = checkTolerance(options.toleranceMs ?? 60_000);
  return {
    provider: "linear",
    identity: linearIdentity,
    verifier: {
      verify(request, secrets, nowMs): Verified {
        requireSecrets(secrets);
        const digest = decodeHex(requireHeader(request.headers, HEADER));
        const secretIndex = findMatchingSecret(
          secrets,
          utf8Secret,
          (key) => hmac("sha256", key, [request.body]),
          digest === undefined ? [] : [digest],
        );
        const signedAt = bodyTimestamp(request.body);
        checkTimestamp(signedAt, nowMs, toleranceMs);
        return { secretIndex, signedAt };
      },
    },
  };
}

/**
 * A Linear source (`Linear-Signature`). Returns `{ provider: "linear", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { linear: linear({ secrets: [{ env: "LINEAR_SECRET" }] }) }
 * ```
 */
export const linear = defineProvider({
  name: "linear",
  options: signedWithTolerance,
  identity: linearIdentity,
  docs: "#linear",
  headers: { signature: ["linear-signature"], context: ["linear-delivery", "linear-event"] },
  scheme: (_source, context) => linearScheme(context.window),
});
