/**
 * Presets: providers whose scheme is a variant of one the catalogue already verifies, each one
 * file in ./presets/ (built with presets/kit.ts) and listed once in presets/index.ts. This module
 * derives the table by name from that list, for `presetScheme` and the tests.
 */

import { providerDefinition } from "./definition.ts";
import * as listed from "./presets/index.ts";
import { type Preset, presetOf, presetSchemeOf } from "./presets/kit.ts";
import type { ProviderScheme } from "./types.ts";

export { hexBodyVerifier, type Preset } from "./presets/kit.ts";

type Listed = (typeof listed)[keyof typeof listed];

/** A provider name that is a preset. */
export type PresetName = Listed[typeof providerDefinition]["name"];

type PresetNamed<N extends PresetName> = Extract<
  Listed,
  { readonly [providerDefinition]: { readonly name: N } }
>[typeof presetOf];

/**
 * Every preset by provider name, in catalogue order (presets/index.ts).
 *
 * @example
 * ```ts
 * presets.typeform.identity.id; // "$.event_id"
 * ```
 */
export const presets = Object.fromEntries(
  Object.values(listed)
    // In the CommonJS build the namespace also holds `default`: only the helpers carry a preset.
    .filter((helper: unknown): helper is Listed => typeof helper === "function")
    .map((helper) => [helper[providerDefinition].name, helper[presetOf]]),
) as { readonly [N in PresetName]: PresetNamed<N> };

/** Every preset's provider name, in catalogue order. */
export const presetNames = Object.keys(presets) as PresetName[];

/**
 * True when `provider` names a preset.
 *
 * @example
 * ```ts
 * isPreset("vercel"); // true
 * ```
 */
export function isPreset(provider: string): provider is PresetName {
  return Object.hasOwn(presets, provider);
}

/**
 * A preset's scheme: the generic machinery it names, with the provider's name and identity.
 * `toleranceMs` overrides the preset's window (schemes that sign no timestamp ignore it).
 *
 * @example
 * ```ts
 * presetScheme("typeform").provider; // "typeform"
 * presetScheme("workos", { toleranceMs: 60_000 });
 * ```
 */
export function presetScheme(
  name: PresetName,
  options: { readonly toleranceMs?: number } = {},
): ProviderScheme {
  const preset: Preset = presets[name];
  return presetSchemeOf(name, preset, options);
}
