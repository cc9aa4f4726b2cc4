/**
 * The registry as data: every provider's definition, by name. Derived from registry.ts, so a
 * provider listed there is everywhere at once (config schema, error messages, `schemeFor`).
 */

import { providerDefinition } from "./definition.ts";
import * as registry from "./registry.ts";

type Helper = (typeof registry)[keyof typeof registry];

/** The definition of any registered provider (a union: narrow it by `name`). */
export type RegisteredProvider = Helper[typeof providerDefinition];

/** Every `provider` value a source may name. */
export type ProviderName = RegisteredProvider["name"];

/**
 * Every registered provider's definition, sorted by name.
 *
 * @example
 * ```ts
 * providerDefinitions.map((p) => p.name); // ["adyen", "asana", "bitbucket", …]
 * ```
 */
export const providerDefinitions: readonly RegisteredProvider[] = Object.values(registry)
  // In the CommonJS build the namespace also holds `default` (module.exports itself, no
  // definition): only the helpers carry one.
  .filter((helper: unknown): helper is Helper => typeof helper === "function")
  .map((helper: Helper): RegisteredProvider => helper[providerDefinition])
  .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

/**
 * Every provider scheme a source may name, sorted.
 *
 * @example
 * ```ts
 * providerNames.includes("stripe"); // true
 * ```
 */
export const providerNames: readonly ProviderName[] = providerDefinitions.map((p) => p.name);

const byName: ReadonlyMap<string, RegisteredProvider> = new Map(
  providerDefinitions.map((p) => [p.name, p]),
);

/**
 * The definition of the provider a source names, or `undefined` for an unknown name.
 *
 * @example
 * ```ts
 * providerFor("stripe")?.docs; // "#stripe"
 * ```
 */
export function providerFor(name: string): RegisteredProvider | undefined {
  return byName.get(name);
}
