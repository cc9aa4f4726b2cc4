/**
 * Discord interactions: `X-Signature-Ed25519: <hex>` is an Ed25519 signature over
 * `{X-Signature-Timestamp}{raw body}`, checked with the application's public key (64 hex
 * characters, configured as the source's "secret"). Discord probes endpoints with bad
 * signatures and expects 401, so the scheme sets `rejectionStatus: 401`.
 */

import { createPublicKey, type KeyObject, verify as verifySignature } from "node:crypto";
import { signedWithTolerance } from "../config/source-fields.ts";
import { field, jsonOrUndefined, parseJsonOrUndefined, scalarText } from "./body.ts";
import { decodeHex } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import { requireHeader, requireSecrets, requireTimestampHeader } from "./match.ts";
import { verifyTimestampedKeySignature } from "./timestamped-key-signature.ts";
import { checkTolerance } from "./timestamps.ts";
import type {
  HandshakeResponse,
  IdentityContext,
  IdentitySpec,
  ProviderScheme,
  SignedRequest,
  Verified,
} from "./types.ts";

/**
 * Options of the Discord interactions scheme.
 *
 * @example
 * ```ts
 * const options: DiscordOptions = { toleranceMs: 300_000 };
 * ```
 */
export interface DiscordOptions {
  /**
   * How far `X-Signature-Timestamp` (integer seconds) may be from now, both ways, in ms.
   * Default `Infinity`: Discord documents no window and its own library checks none; with a
   * finite window the timestamp must also be canonical integer seconds.
   */
  readonly toleranceMs?: number;
}

const SIGNATURE_HEADER = "x-signature-ed25519";
const TIMESTAMP_HEADER = "x-signature-timestamp";
/** DER prefix of an SPKI structure holding a raw 32-byte Ed25519 public key (RFC 8410). */
const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const SIGNATURE_BYTES = 64;

/**
 * Turns a hex Ed25519 public key (32 bytes) into a `KeyObject`, or `undefined` when it is not
 * exactly that.
 *
 * @example
 * ```ts
 * discordPublicKey("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"); // KeyObject
 * ```
 */
export function discordPublicKey(hex: string): KeyObject | undefined {
  const raw = decodeHex(hex.trim());
  if (raw === undefined || raw.length !== 32) return undefined;
  try {
    return createPublicKey({
      key: Buffer.concat([SPKI_ED25519_PREFIX, raw]),
      format: "der",
      type: "spki",
    });
  } catch {
    return undefined;
  }
}

const INTERACTION_TYPES: Readonly<Record<number, string>> = {
  1: "ping",
  2: "application_command",
  3: "message_component",
  4: "application_command_autocomplete",
  5: "modal_submit",
};

/**
 * The Discord interaction type by name (`"application_command"`, `"message_component"`…), or
 * the number as text for types unknown here.
 *
 * @example
 * ```ts
 * discordInteractionType(ctx); // "application_command"
 * ```
 */
export function discordInteractionType(context: IdentityContext): string | undefined {
  const type = field(jsonOrUndefined(context), "type");
  if (typeof type !== "number") return undefined;
  return INTERACTION_TYPES[type] ?? String(type);
}

/** Discord's epoch (2015-01-01) in ms; a snowflake's top 42 bits are ms since it. */
const DISCORD_EPOCH = 1_420_070_400_000n;

/**
 * When the interaction was created, from its snowflake `id` (ms since the epoch).
 *
 * @example
 * ```ts
 * discordOccurredAt(ctx); // 1700000000000
 * ```
 */
export function discordOccurredAt(context: IdentityContext): number | undefined {
  const id = field(jsonOrUndefined(context), "id");
  if (typeof id !== "string" || !/^[0-9]{1,20}$/.test(id)) return undefined;
  return Number((BigInt(id) >> 22n) + DISCORD_EPOCH);
}

/**
 * Where a Discord interaction's identity lives: its snowflake `id`, the type by name, the
 * creation time from the snowflake, and the channel as ordering key.
 *
 * @example
 * ```ts
 * discordIdentity.id; // "$.id"
 * ```
 */
export const discordIdentity: IdentitySpec = Object.freeze({
  id: "$.id",
  type: discordInteractionType,
  occurredAt: discordOccurredAt,
  orderingKey: (context: IdentityContext) =>
    scalarText(field(jsonOrUndefined(context), "channel_id")),
});

/**
 * Discord's PING (`{"type":1,…}`) is answered `200 application/json` with `{"type":1}` (PONG);
 * anything else is not a handshake (`undefined`).
 *
 * @example
 * ```ts
 * discordHandshake(request)?.body; // '{"type":1}'
 * ```
 */
export function discordHandshake(request: SignedRequest): HandshakeResponse | undefined {
  if (field(parseJsonOrUndefined(request.body), "type") !== 1) return undefined;
  return {
    status: 200,
    headers: { "content-type": "application/json; charset=utf-8" },
    body: '{"type":1}',
  };
}

/**
 * The Discord interactions scheme. Verification, in order:
 * 1. no active public key → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. `x-signature-ed25519` absent or blank → HOOKINBOX_SIGNATURE_MISSING;
 *    `x-signature-timestamp` absent → HOOKINBOX_TIMESTAMP_MISSING; with a finite window, not
 *    canonical integer seconds → HOOKINBOX_TIMESTAMP_MALFORMED;
 * 3. every active key that is a valid 32-byte hex key (others are skipped; none valid →
 *    HOOKINBOX_SOURCE_NO_ACTIVE_SECRET); a signature that is not 64 bytes of hex matches
 *    nothing; no key verifies it → HOOKINBOX_SIGNATURE_MISMATCH (401);
 * 4. then the window, when finite: HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE.
 * `rejectionStatus` is 401: Discord wants 401 for every request it should consider forged.
 * `handshake` answers PING (see {@link discordHandshake}).
 *
 * @example
 * ```ts
 * const scheme = discordScheme();
 * scheme.verifier.verify(request, [{ index: 0, value: "<application public key hex>" }], Date.now());
 * ```
 */
export function discordScheme(options: DiscordOptions = {}): ProviderScheme {
  const toleranceMs = checkTolerance(options.toleranceMs ?? Number.POSITIVE_INFINITY);
  const keys = new Map<string, KeyObject | null>();
  const keyOf = (secret: string): KeyObject | undefined => {
    const hit = keys.get(secret);
    if (hit !== undefined) return hit ?? undefined;
    const key = discordPublicKey(secret);
    if (keys.size >= 64) keys.clear();
    keys.set(secret, key ?? null);
    return key;
  };
  return {
    provider: "discord",
    identity: discordIdentity,
    handshake: discordHandshake,
    rejectionStatus: 401,
    verifier: {
      verify(request, secrets, nowMs): Verified {
        requireSecrets(secrets);
        const signatureHex = requireHeader(request.headers, SIGNATURE_HEADER);
        const timestamp = requireTimestampHeader(request.headers, TIMESTAMP_HEADER);
        return verifyTimestampedKeySignature({
          timestamp,
          signature: decodeHex(signatureHex),
          body: request.body,
          secrets,
          nowMs,
          toleranceMs,
          keyOf,
          check: (key, message, signature) =>
            signature.length === SIGNATURE_BYTES && verifySignature(null, message, key, signature),
          noKeyMessage: "no active secret is a 32-byte hex Ed25519 public key",
        });
      },
    },
  };
}

/**
 * A Discord interactions source (Ed25519 public key; answers PING; 401 on bad signatures). Returns `{ provider: "discord", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { discord: discord({ secrets: ["<public key hex>"] }) }
 * ```
 */
export const discord = defineProvider({
  name: "discord",
  options: signedWithTolerance,
  identity: discordIdentity,
  docs: "#discord-interactions",
  headers: { signature: ["x-signature-ed25519", "x-signature-timestamp"] },
  scheme: (_source, context) => discordScheme(context.window),
});
