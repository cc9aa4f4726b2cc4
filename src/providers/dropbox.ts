/**
 * Dropbox: notifications carry `X-Dropbox-Signature`, hex HMAC-SHA256 of the raw body keyed
 * with the app secret; the endpoint is verified with `GET ?challenge=…` (echoed, unsigned).
 * A notification only says "these accounts changed": the handler fetches the changes with its
 * cursor (`/files/list_folder/continue`).
 */

import { randomUUID } from "node:crypto";
import { signed } from "../config/source-fields.ts";
import { field, jsonOrUndefined, scalarText } from "./body.ts";
import { dropboxChallenge } from "./challenges.ts";
import { defineProvider } from "./definition.ts";
import { hexBodyVerifier } from "./presets/kit.ts";
import type { IdentityContext, IdentitySpec, ProviderScheme } from "./types.ts";

/**
 * The Dropbox dedup key: one per request (`notification:<uuid>`). Dropbox sends no id and its
 * body names only the accounts that changed, so two notifications an hour apart are
 * byte-identical; keying on the body would drop the second. Duplicates are harmless instead:
 * the handler fetches changes from its cursor, and a second fetch finds nothing new.
 *
 * @example
 * ```ts
 * dropboxNotificationId(ctx); // "notification:6f1c…"
 * ```
 */
export function dropboxNotificationId(_context: IdentityContext): string {
  return `notification:${randomUUID()}`;
}

/**
 * The Dropbox ordering key: the account when the notification names exactly one.
 *
 * @example
 * ```ts
 * dropboxAccount(ctx); // "dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc"
 * ```
 */
export function dropboxAccount(context: IdentityContext): string | undefined {
  const accounts = field(field(jsonOrUndefined(context), "list_folder"), "accounts");
  return Array.isArray(accounts) && accounts.length === 1 ? scalarText(accounts[0]) : undefined;
}

/**
 * Where a Dropbox notification's identity lives.
 *
 * @example
 * ```ts
 * dropboxIdentity.type; // a function returning "list_folder"
 * ```
 */
export const dropboxIdentity: IdentitySpec = Object.freeze({
  id: dropboxNotificationId,
  type: (context: IdentityContext) =>
    field(jsonOrUndefined(context), "list_folder") === undefined ? undefined : "list_folder",
  orderingKey: dropboxAccount,
});

/**
 * The Dropbox scheme.
 *
 * @example
 * ```ts
 * const scheme = dropboxScheme();
 * ```
 */
export function dropboxScheme(): ProviderScheme {
  return {
    provider: "dropbox",
    verifier: hexBodyVerifier("x-dropbox-signature"),
    identity: dropboxIdentity,
    challenge: (request) => dropboxChallenge(request),
  };
}

/**
 * A Dropbox source (`X-Dropbox-Signature`, GET challenge). Returns `{ provider: "dropbox", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { dropbox: dropbox({ secrets: [{ env: "DROPBOX_APP_SECRET" }] }) }
 * ```
 */
export const dropbox = defineProvider({
  name: "dropbox",
  options: signed,
  identity: dropboxIdentity,
  docs: "#dropbox",
  headers: { signature: ["x-dropbox-signature"] },
  scheme: () => dropboxScheme(),
});
