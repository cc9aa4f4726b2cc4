/**
 * Microsoft Graph change notifications: a subscription names a `clientState` secret, and Graph
 * puts it in every notification of the batch `value[]` (nothing is signed). A new subscription's
 * URL is validated first with `?validationToken=…`, echoed as text within 10 s. Each item of
 * `value` is stored as its own event.
 */

import { signed } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { field, jsonOrUndefined, parseJsonOrUndefined, scalarText } from "./body.ts";
import { graphValidation } from "./challenges.ts";
import { defineProvider } from "./definition.ts";
import { requireSecrets } from "./match.ts";
import { splitJson } from "./split.ts";
import { matchToken } from "./token.ts";
import type { IdentityContext, IdentitySpec, ProviderScheme, Verified } from "./types.ts";

/**
 * The Graph dedup key: the notification's `id` when present, else
 * `<subscriptionId>:<changeType or lifecycleEvent>:<resource>:<resourceData @odata.etag>`.
 *
 * @example
 * ```ts
 * graphNotificationId(ctx); // "lsgTZMr9KwAAA"
 * ```
 */
export function graphNotificationId(context: IdentityContext): string | undefined {
  const item = jsonOrUndefined(context);
  const id = scalarText(field(item, "id"));
  if (id !== undefined) return id;
  const parts = [
    scalarText(field(item, "subscriptionId")),
    scalarText(field(item, "changeType")) ?? scalarText(field(item, "lifecycleEvent")),
    scalarText(field(item, "resource")),
    scalarText(field(field(item, "resourceData"), "@odata.etag")),
  ];
  return parts.every((p) => p !== undefined) ? parts.join(":") : undefined;
}

/**
 * Where a Graph notification's identity lives (per item of `value`).
 *
 * @example
 * ```ts
 * graphIdentity.orderingKey; // "$.resource"
 * ```
 */
export const graphIdentity: IdentitySpec = Object.freeze({
  id: graphNotificationId,
  type: (context: IdentityContext) => {
    const item = jsonOrUndefined(context);
    return scalarText(field(item, "changeType")) ?? scalarText(field(item, "lifecycleEvent"));
  },
  orderingKey: "$.resource",
});

/**
 * The Graph scheme. Verification, in order: no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * a body that is not `{"value":[…]}` with a `clientState` in every item →
 * HOOKINBOX_SIGNATURE_MISSING; an item whose `clientState` equals no active secret (constant
 * time) → HOOKINBOX_SIGNATURE_MISMATCH. Every item must match, so one forged item cannot ride
 * along in a genuine batch; the first item's secret is reported.
 *
 * @example
 * ```ts
 * const scheme = msgraphScheme();
 * ```
 */
export function msgraphScheme(): ProviderScheme {
  return {
    provider: "msgraph",
    identity: graphIdentity,
    verifier: {
      verify(request, secrets): Verified {
        requireSecrets(secrets);
        const items = field(parseJsonOrUndefined(request.body), "value");
        if (!Array.isArray(items) || items.length === 0) {
          throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", "expected value[].clientState");
        }
        let verified: Verified | undefined;
        for (const item of items) {
          const state = scalarText(field(item, "clientState"));
          if (state === undefined) {
            throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", "expected value[].clientState");
          }
          const matched = matchToken(state, secrets);
          verified ??= matched;
        }
        return verified as Verified;
      },
    },
    challenge: (request) => graphValidation(request),
    split: (request) => splitJson(request.body, ["value"]),
  };
}

/**
 * A Microsoft Graph change-notification source (`clientState`, validationToken echo). Returns `{ provider: "msgraph", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { msgraph: msgraph({ secrets: [{ env: "GRAPH_CLIENT_STATE" }] }) }
 * ```
 */
export const msgraph = defineProvider({
  name: "msgraph",
  options: signed,
  identity: graphIdentity,
  docs: "#microsoft-graph-change-notifications",
  // Signature headers empty: the clientState is in the JSON body.
  headers: { signature: [] },
  scheme: () => msgraphScheme(),
});
