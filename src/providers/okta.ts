/**
 * Okta event hooks: Okta sends the header and value configured as the hook's "Authentication
 * field" and "Authentication secret" (nothing is signed), and verifies a new hook once with a
 * `GET` carrying `X-Okta-Verification-Challenge`, answered `{"verification": "<value>"}`. Each
 * POST carries a batch in `data.events`, stored as one event per item (`uuid`).
 */

import { headerName, signed } from "../config/source-fields.ts";
import { field, jsonOrUndefined, scalarText } from "./body.ts";
import { echoable } from "./challenges.ts";
import { defineProvider } from "./definition.ts";
import { readHeader } from "./match.ts";
import { splitJson } from "./split.ts";
import { tokenVerifier } from "./token.ts";
import type { IdentityContext, IdentitySpec, ProviderScheme } from "./types.ts";

/**
 * Options of the Okta scheme.
 *
 * @example
 * ```ts
 * const options: OktaOptions = { header: "authorization" };
 * ```
 */
export interface OktaOptions {
  /** The hook's "Authentication field" (a header name, lower-case). Default `authorization`. */
  readonly header?: string;
}

/**
 * The Okta ordering key: the first target of the event (the user, app or group acted on),
 * else its actor.
 *
 * @example
 * ```ts
 * oktaOrderingKey(ctx); // "00u1a2b3c4d5e6f7g8h9"
 * ```
 */
export function oktaOrderingKey(context: IdentityContext): string | undefined {
  const item = jsonOrUndefined(context);
  const target = field(item, "target");
  const first = Array.isArray(target) ? target[0] : undefined;
  return scalarText(field(first, "id")) ?? scalarText(field(field(item, "actor"), "id"));
}

/**
 * Where an Okta event's identity lives (per item of `data.events`).
 *
 * @example
 * ```ts
 * oktaIdentity.id; // "$.uuid"
 * ```
 */
export const oktaIdentity: IdentitySpec = Object.freeze({
  id: "$.uuid",
  type: "$.eventType",
  occurredAt: "$.published",
  orderingKey: oktaOrderingKey,
});

/**
 * The Okta scheme: every request (the verification GET too) must carry the configured header
 * with an active secret as its value (codes as in `tokenVerifier`).
 *
 * @example
 * ```ts
 * const scheme = oktaScheme({ header: "x-okta-hook-auth" });
 * ```
 */
export function oktaScheme(options: OktaOptions = {}): ProviderScheme {
  const verifier = tokenVerifier({ kind: "header", name: options.header ?? "authorization" });
  return {
    provider: "okta",
    verifier,
    identity: oktaIdentity,
    challenge(request, secrets, nowMs) {
      if (request.method.toUpperCase() !== "GET") return undefined;
      const value = readHeader(request.headers, "x-okta-verification-challenge");
      if (value === undefined) return undefined;
      verifier.verify(request, secrets, nowMs);
      return {
        response: {
          status: 200,
          headers: { "content-type": "application/json; charset=utf-8" },
          body: JSON.stringify({
            verification: echoable(value, "X-Okta-Verification-Challenge"),
          }),
        },
      };
    },
    split: (request) => splitJson(request.body, ["data", "events"]),
  };
}

/**
 * An Okta event hook source (authorization header, GET verification; batches split). Returns `{ provider: "okta", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { okta: okta({ secrets: [{ env: "OKTA_HOOK_AUTH" }] }) }
 * ```
 */
export const okta = defineProvider({
  name: "okta",
  options: {
    ...signed,
    /** The event hook's "Authentication field" header. Default `authorization`. */
    header: headerName.optional(),
  },
  identity: oktaIdentity,
  docs: "#okta-event-hooks",
  // The default header; a source may name another (a destination adds it to `forwardHeaders`).
  headers: { signature: ["authorization"] },
  scheme: (source) =>
    oktaScheme(source.header === undefined ? {} : { header: source.header.toLowerCase() }),
});
