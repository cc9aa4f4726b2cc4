/**
 * What every preset (one file each in this folder, listed in index.ts) is built with: a preset is
 * data — the generic HMAC options (header, prefix, encoding, signed content, timestamp and window),
 * Standard Webhooks or a plain token, plus the provider's identity, docs and headers — and no
 * verification code of its own. {@link definePreset} turns it into the provider's source helper.
 *
 * Where a provider's documentation left a detail open, the entry says "unconfirmed" and the
 * detail can be changed per source (`identity`, `tolerance`).
 */

import { signedWithTolerance } from "../../config/source-fields.ts";
import {
  defineProvider,
  type ProviderHeaders,
  type SourceHelper,
  type SourceSchema,
} from "../definition.ts";
import { type HmacOptions, hmacScheme } from "../hmac.ts";
import { standardWebhooksScheme } from "../standard-webhooks.ts";
import { type TokenLocation, tokenVerifier } from "../token.ts";
import type { IdentitySpec, ProviderScheme, Verifier } from "../types.ts";

/**
 * One preset: how it verifies (generic HMAC options or Standard Webhooks), its default window,
 * and where its identity lives.
 *
 * @example
 * ```ts
 * const preset: Preset = {
 *   verify: { kind: "hmac", options: { header: "x-signature", algorithm: "sha256", encoding: "hex",
 *     secretEncoding: "utf8", signedContent: "{body}", timestampUnit: "s" } },
 *   identity: { id: "$.id", type: "$.type" },
 *   docs: "#example",
 *   headers: { signature: ["x-signature"] },
 * };
 * ```
 */
export interface Preset {
  readonly verify:
    | { readonly kind: "hmac"; readonly options: Omit<HmacOptions, "toleranceMs"> }
    | { readonly kind: "standard-webhooks" }
    | { readonly kind: "token"; readonly where: TokenLocation };
  /** The window when the source sets no `tolerance` (only used where a timestamp is signed). */
  readonly toleranceMs?: number;
  readonly identity: IdentitySpec;
  /** Its section in docs/providers.md. */
  readonly docs: `#${string}`;
  /** The request headers it sends that hookinbox forwards to destinations. */
  readonly headers: ProviderHeaders;
}

/** HMAC-SHA256 of the raw body, hex, keyed with the secret as UTF-8: the most common variant. */
export function hexOptions(header: string): Omit<HmacOptions, "toleranceMs"> {
  return {
    header,
    algorithm: "sha256",
    encoding: "hex",
    secretEncoding: "utf8",
    signedContent: "{body}",
    timestampUnit: "s",
  };
}

/**
 * A verifier of hex HMAC-SHA256 over the raw body in `header` (with an optional prefix such as
 * `sha256=`), keyed with the secret as UTF-8: what Meta, Dropbox and Asana sign their events with.
 *
 * @example
 * ```ts
 * const verifier = hexBodyVerifier("x-hub-signature-256", "sha256=");
 * ```
 */
export function hexBodyVerifier(header: string, prefix?: string): Verifier {
  return hmacScheme({
    ...hexOptions(header),
    ...(prefix === undefined ? {} : { prefix }),
    toleranceMs: 0,
  }).verifier;
}

/** A preset verifying hex HMAC-SHA256 of the body in `header` (after an optional prefix). */
export const hexBody = (header: string, prefix?: string): Preset["verify"] => ({
  kind: "hmac",
  options: { ...hexOptions(header), ...(prefix === undefined ? {} : { prefix }) },
});

/**
 * A preset verifying `<header>: t=<timestamp>,v1=<hex>` over `{t}.{body}` (Stripe's layout, as
 * WorkOS and Calendly sign).
 */
export const timestampedHex = (header: string, unit: "s" | "ms"): Preset["verify"] => ({
  kind: "hmac",
  options: {
    ...hexOptions(header),
    prefix: "v1=",
    signedContent: "{timestamp}.{body}",
    timestampTag: "t=",
    timestampUnit: unit,
  },
});

/** What a preset sending through Svix declares: `svix-*` headers, Standard Webhooks verification. */
export const svix = {
  headers: { signature: ["svix-id", "svix-timestamp", "svix-signature"] },
  verify: { kind: "standard-webhooks" },
} as const satisfies Pick<Preset, "headers" | "verify">;

/** Joins parts with ":" when every one is present, else `undefined` (no partial keys). */
export function joined(...parts: readonly (string | undefined)[]): string | undefined {
  return parts.every((p) => p !== undefined) ? parts.join(":") : undefined;
}

/**
 * A preset's scheme: the generic machinery it names, with the provider's name and identity.
 * `toleranceMs` overrides the preset's window (schemes that sign no timestamp ignore it).
 *
 * @example
 * ```ts
 * presetSchemeOf("typeform", typeform[presetOf]).provider; // "typeform"
 * ```
 */
export function presetSchemeOf(
  name: string,
  preset: Preset,
  options: { readonly toleranceMs?: number } = {},
): ProviderScheme {
  const toleranceMs = options.toleranceMs ?? preset.toleranceMs ?? 300_000;
  const { verify } = preset;
  const verifier =
    verify.kind === "hmac"
      ? hmacScheme({ ...verify.options, toleranceMs }).verifier
      : verify.kind === "token"
        ? tokenVerifier(verify.where)
        : standardWebhooksScheme({ toleranceMs }).verifier;
  return { provider: name, verifier, identity: preset.identity };
}

/** The key under which a preset's source helper carries the preset itself. */
export const presetOf: unique symbol = Symbol("hookinbox.preset");

/** A preset's source helper: its options are the secrets and the window. */
export type PresetHelper<N extends string, P extends Preset> = SourceHelper<
  N,
  SourceSchema<N, typeof signedWithTolerance>
> & { readonly [presetOf]: P };

/**
 * Defines a preset and returns its source helper (the preset's file exports it, index.ts lists
 * it): its scheme is {@link presetSchemeOf}.
 *
 * @example
 * ```ts
 * export const vercel = definePreset("vercel", { docs: "#vercel", headers: { … }, verify: { … }, identity: { … } });
 * ```
 */
export function definePreset<const N extends string, const P extends Preset>(
  name: N,
  preset: P,
): PresetHelper<N, P> {
  const helper = defineProvider({
    name,
    options: signedWithTolerance,
    identity: preset.identity,
    docs: preset.docs,
    headers: preset.headers,
    scheme: (_source, context) => presetSchemeOf(name, preset, context.window),
  });
  return Object.assign(helper, { [presetOf]: preset }) as PresetHelper<N, P>;
}
