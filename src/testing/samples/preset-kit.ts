/**
 * A small kit for the second-wave samples: most of them are one realistic payload plus one of a
 * handful of signing layouts (hex or base64 HMAC of the body in a header, `t=…,v1=…`, Svix
 * headers, a plain token, basic auth). Written apart from src/providers on purpose: a sample
 * that verifies is a second implementation agreeing with the first.
 */

import { createHash } from "node:crypto";
import { mac, randomToken, seconds } from "./sign.ts";
import type { ProviderSample, SampleInput, SampleRequest, SampleTraits } from "./types.ts";

/** What one payload builder returns: the body and where the dedup key lands. */
export interface BuiltPayload {
  /** A JSON value (serialised once, compactly) or a raw string (forms). */
  readonly body: unknown;
  /** The dedup key a receiver derives; `undefined` when it does not exist in the request. */
  readonly eventId: string | undefined;
  /** Headers the provider sends besides the signature (ids, event names). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly version?: string;
}

/** How a provider signs: the headers it adds for `body` signed at `input.nowMs` with `input.secret`. */
export type Signer = (body: string, input: SampleInput) => Record<string, string>;

/** What a sample built with {@link presetSample} declares. */
export interface PresetSampleSpec {
  readonly provider: string;
  readonly origin: string;
  readonly defaultType: string;
  readonly unhandledType: string;
  readonly exampleSecret: string;
  readonly traits: SampleTraits;
  newId(): string;
  payload(input: SampleInput, type: string): BuiltPayload;
  readonly sign: Signer;
  /** Headers sent when `--data FILE` replaces the body (ids the provider puts in headers). */
  headersForRawBody?(input: SampleInput): Record<string, string>;
  sourceOptions?(url: string): Record<string, unknown>;
  tamper?(body: string): string;
}

/**
 * A sample from a payload builder and a signer. A raw `--data` body is signed as is and carries
 * no known dedup key.
 *
 * @example
 * ```ts
 * const sample = presetSample({ provider: "vercel", sign: hexBodySigner("x-vercel-signature", "sha1"), … });
 * ```
 */
export function presetSample(spec: PresetSampleSpec): ProviderSample {
  return {
    provider: spec.provider,
    origin: spec.origin,
    defaultType: spec.defaultType,
    unhandledType: spec.unhandledType,
    exampleSecret: spec.exampleSecret,
    traits: () => spec.traits,
    newId: spec.newId,
    ...(spec.sourceOptions ? { sourceOptions: spec.sourceOptions } : {}),
    ...(spec.tamper ? { tamper: spec.tamper } : {}),
    build(input): SampleRequest {
      const type = input.type ?? spec.defaultType;
      const built: BuiltPayload =
        input.body === undefined
          ? spec.payload(input, type)
          : { body: input.body, eventId: undefined, headers: spec.headersForRawBody?.(input) };
      const body = typeof built.body === "string" ? built.body : JSON.stringify(built.body);
      return {
        url: input.url,
        headers: {
          "content-type":
            spec.traits.bodyFormat === "form"
              ? "application/x-www-form-urlencoded"
              : "application/json",
          ...built.headers,
          ...spec.sign(body, input),
        },
        body,
        eventId: built.eventId,
        type,
        ...(built.version === undefined ? {} : { version: built.version }),
      };
    },
  };
}

/**
 * Signs the raw body with HMAC into `header` (`prefix` + hex or base64), keyed with the secret.
 *
 * @example
 * ```ts
 * bodyHmacSigner("x-hub-signature", "sha256", "hex", "sha256=");
 * ```
 */
export function bodyHmacSigner(
  header: string,
  algorithm: "sha1" | "sha256",
  encoding: "hex" | "base64",
  prefix = "",
): Signer {
  return (body, { secret }) => ({
    [header]: `${prefix}${mac(algorithm, secret, body, encoding)}`,
  });
}

/**
 * Svix's headers (Clerk, Resend): `svix-id` (the input id), `svix-timestamp`, `svix-signature:
 * v1,<base64 of HMAC-SHA256("{id}.{t}.{body}")>` keyed with the base64 part of `whsec_…`.
 *
 * @example
 * ```ts
 * svixSigner('{"type":"user.created"}', { secret: "whsec_…", id: "msg_1", nowMs, url });
 * ```
 */
export const svixSigner: Signer = (body, { secret, id, nowMs }) => {
  const t = seconds(nowMs);
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return {
    "svix-id": id,
    "svix-timestamp": String(t),
    "svix-signature": `v1,${mac("sha256", key, `${id}.${t}.${body}`, "base64")}`,
  };
};

/**
 * A token sent as is in `header` (Telegram, Okta).
 *
 * @example
 * ```ts
 * tokenSigner("x-telegram-bot-api-secret-token"); // sends the secret itself
 * ```
 */
export function tokenSigner(header: string): Signer {
  return (_body, { secret }) => ({ [header]: secret });
}

/**
 * A fresh UUID-like id (`8-4-4-4-12` lower-case hex).
 *
 * @example
 * ```ts
 * uuidLike(); // "3f2b…-…"
 * ```
 */
export function uuidLike(): string {
  const hex = randomToken(32, "0123456789abcdef");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A stable UUID-like value derived from `seed` (the same seed gives the same value).
 *
 * @example
 * ```ts
 * uuidFrom("evt_1"); // always the same
 * ```
 */
export function uuidFrom(seed: string): string {
  const hex = createHash("sha256").update(seed).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * An ISO date-time for a sample's own timestamps: the `sequence` (seconds) when given, else a
 * fixed instant, so a redelivery signed later carries the same value.
 *
 * @example
 * ```ts
 * stableIso(undefined); // "2026-11-30T12:00:00.000Z"
 * ```
 */
export function stableIso(sequence: number | undefined): string {
  return new Date(
    sequence === undefined ? Date.UTC(2026, 10, 30, 12) : sequence * 1000,
  ).toISOString();
}
