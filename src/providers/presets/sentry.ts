/** `Sentry-Hook-Signature`: hex HMAC-SHA256 of the body with the integration's client secret. */

import { field, jsonOrUndefined, path, scalarText } from "../body.ts";
import { readHeader } from "../match.ts";
import type { IdentityContext } from "../types.ts";
import { definePreset, hexBody } from "./kit.ts";

/**
 * The Sentry event type: `<Sentry-Hook-Resource>.<action>` (`issue.created`), or the resource
 * alone when the body has no `action`.
 *
 * @example
 * ```ts
 * sentryEventType(ctx); // "issue.resolved"
 * ```
 */
export function sentryEventType(context: IdentityContext): string | undefined {
  const resource = readHeader(context.headers, "sentry-hook-resource");
  const action = scalarText(field(jsonOrUndefined(context), "action"));
  if (resource === undefined) return action;
  return action === undefined ? resource : `${resource}.${action}`;
}

/**
 * The Sentry ordering key: the issue id for issue and comment events, else the installation.
 *
 * @example
 * ```ts
 * sentryOrderingKey(ctx); // "issue:1234"
 * ```
 */
export function sentryOrderingKey(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  const issue =
    scalarText(path(body, "data", "issue", "id")) ??
    scalarText(path(body, "data", "issue_id")) ??
    scalarText(path(body, "data", "event", "issue_id"));
  if (issue !== undefined) return `issue:${issue}`;
  const installation = scalarText(path(body, "installation", "uuid"));
  return installation === undefined ? undefined : `installation:${installation}`;
}

/** A Sentry integration source (`Sentry-Hook-Signature`). @example `sentry({ secrets: [{ env: "SENTRY_CLIENT_SECRET" }] })` */
export const sentry = definePreset("sentry", {
  docs: "#sentry",
  headers: {
    signature: ["sentry-hook-signature"],
    context: ["request-id", "sentry-hook-resource", "sentry-hook-timestamp"],
  },
  verify: hexBody("sentry-hook-signature"),
  identity: Object.freeze({
    id: "header:request-id",
    type: sentryEventType,
    occurredAt: "header:sentry-hook-timestamp",
    orderingKey: sentryOrderingKey,
  }),
});
