/**
 * A provider definition: everything hookinbox knows about one provider, in the provider's own
 * file. The registry (registry.ts) lists the definitions once; the config schema, its error
 * messages, `providerNames`, `schemeFor` and the `stripe({ … })`-style helpers are derived from it.
 */

import { z } from "zod";
import type { SecretValue } from "../config/source-fields.ts";
import type { KeyFetcher } from "./keys/index.ts";
import type { AnyProviderScheme, IdentitySpec } from "./types.ts";

/**
 * A config type that also takes readonly arrays and objects (`as const`, or values from a frozen
 * module): the schema only reads them. Functions are left as they are.
 */
export type AcceptReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends Date
    ? T
    : T extends readonly (infer U)[]
      ? readonly AcceptReadonly<U>[]
      : T extends object
        ? { readonly [K in keyof T]: AcceptReadonly<T[K]> }
        : T;

/**
 * What building a scheme may need besides the source's own options: its name, the configured
 * window, the key fetcher, and the process-level settings a URL or secret option falls back to.
 *
 * @example
 * ```ts
 * const scheme = stripeScheme({ toleranceMs: context.toleranceMs });
 * ```
 */
export interface SchemeContext {
  /** The source's name (it appears in the URL, `/webhooks/<source>`). */
  readonly source: string;
  /** The source's `tolerance` in ms, else 300 000 (Stripe's and Standard Webhooks' window). */
  readonly toleranceMs: number;
  /** `{ toleranceMs }` when the source sets `tolerance`, else `{}`: the provider's own window stays. */
  readonly window: { readonly toleranceMs?: number };
  /** Where public keys come from (tests inject a fetcher). */
  readonly keys: { readonly fetcher?: KeyFetcher };
  /**
   * `own`, else `http.publicUrl`, without a trailing slash; neither set →
   * HOOKINBOX_CONFIG_INVALID naming `sources.<source>.<option>` and `why`.
   */
  publicUrl(own: string | undefined, option: string, why: string): string;
  /** `own`, else `http.publicUrl` + `/webhooks/<source>` (what a provider calls by default). */
  endpointUrl(own: string | undefined, option: string, why: string): string;
  /** A secret-valued option (a literal or `{ env }`) resolved to its text. */
  secret(value: SecretValue, index: number, option: string): string;
}

/**
 * The request headers a provider sends that a destination needs to verify and read the event as
 * the provider sent it: hookinbox forwards them (src/forward/forwarded-headers.ts derives its
 * allowlist from every definition's). Lower-case names.
 *
 * @example
 * ```ts
 * const headers: ProviderHeaders = { signature: ["stripe-signature"] };
 * ```
 */
export interface ProviderHeaders {
  /**
   * The headers its proof travels in (signature, token, its timestamp when signed apart). Empty
   * when the proof is in the body (Adyen, Mailgun, SNS, Microsoft Graph) or in headers each
   * source names (`hmac`).
   */
  readonly signature: readonly string[];
  /** Its id, event and other context headers (not needed to verify). */
  readonly context?: readonly string[];
}

/** The zod fields of a source's options (besides `provider`). */
export type OptionsShape = Readonly<Record<string, z.ZodType>>;

/** The config schema of a source: `{ provider: name, …options }`, strict. */
export type SourceSchema<N extends string, S extends OptionsShape> = z.ZodObject<
  { provider: z.ZodLiteral<N> } & S,
  z.core.$strict
>;

/**
 * One provider, as its file defines it.
 *
 * @example
 * ```ts
 * const definition: ProviderDefinition = stripe[providerDefinition];
 * definition.name; // "stripe"
 * ```
 */
export interface ProviderDefinition<N extends string = string, T extends z.ZodType = z.ZodType> {
  /** The `provider` value a source names. */
  readonly name: N;
  /** The source's config schema (strict; `provider` included). */
  readonly schema: T;
  /** Where the event's identity lives by default (absent when only options say: `hmac`). */
  readonly identity?: IdentitySpec;
  /** docs/providers.md's section about it (the catalogue test checks the anchor exists). */
  readonly docs: `#${string}`;
  /** The request headers it sends that hookinbox forwards to destinations. */
  readonly headers: ProviderHeaders;
  /** Builds the scheme for a valid source. */
  scheme(source: z.output<T>, context: SchemeContext): AnyProviderScheme;
}

/** The key under which a source helper carries its provider's definition. */
export const providerDefinition: unique symbol = Symbol("hookinbox.providerDefinition");

/**
 * A source helper (`stripe({ secrets })`): it returns the source object with `provider` set and
 * its options type-checked, and carries its provider's definition for the registry.
 *
 * @example
 * ```ts
 * const source = stripe({ secrets: [{ env: "STRIPE_WEBHOOK_SECRET" }] }); // { provider: "stripe", … }
 * ```
 */
export interface SourceHelper<N extends string = string, T extends z.ZodType = z.ZodType> {
  (options: AcceptReadonly<Omit<z.input<T>, "provider">>): AcceptReadonly<z.input<T>>;
  readonly [providerDefinition]: ProviderDefinition<N, T>;
}

/** What a provider file writes: its name, option fields, identity, docs, headers and scheme. */
export interface ProviderSpec<N extends string, S extends OptionsShape, T extends z.ZodType> {
  readonly name: N;
  readonly options: S;
  /** A rule across options (zod `refine`), when one field alone cannot say it. */
  readonly refine?: (schema: SourceSchema<N, S>) => T;
  readonly identity?: IdentitySpec;
  readonly docs: `#${string}`;
  readonly headers: ProviderHeaders;
  scheme(source: z.output<T>, context: SchemeContext): AnyProviderScheme;
}

/**
 * Defines a provider and returns its source helper. The provider's file exports the result; the
 * registry (registry.ts) lists it.
 *
 * @example
 * ```ts
 * export const stripe = defineProvider({
 *   name: "stripe",
 *   options: { ...signed, tolerance: duration.optional() },
 *   identity: stripeIdentity,
 *   docs: "#stripe",
 *   headers: { signature: ["stripe-signature"] },
 *   scheme: (_source, context) => stripeScheme({ toleranceMs: context.toleranceMs }),
 * });
 * ```
 */
export function defineProvider<
  N extends string,
  S extends OptionsShape,
  T extends z.ZodType = SourceSchema<N, S>,
>(spec: ProviderSpec<N, S, T>): SourceHelper<N, T> {
  const base = z.strictObject({ provider: z.literal(spec.name), ...spec.options }) as SourceSchema<
    N,
    S
  >;
  const schema = (spec.refine ? spec.refine(base) : base) as T;
  const definition: ProviderDefinition<N, T> = {
    name: spec.name,
    schema,
    docs: spec.docs,
    headers: spec.headers,
    scheme: spec.scheme,
    ...(spec.identity === undefined ? {} : { identity: spec.identity }),
  };
  const helper = (options: object) => ({ provider: spec.name, ...options });
  return Object.assign(helper, { [providerDefinition]: definition }) as unknown as SourceHelper<
    N,
    T
  >;
}
