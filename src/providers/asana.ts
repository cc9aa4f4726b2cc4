/**
 * Asana: events carry `X-Hook-Signature`, hex HMAC-SHA256 of the raw body keyed with the secret
 * Asana chose for the webhook. Asana delivers that secret ONCE, in the `X-Hook-Secret` header of
 * the handshake POST it sends while the webhook is being created, and expects it echoed back.
 *
 * Decision: hookinbox cannot know the secret before the handshake, and a handshake proves
 * nothing (anyone can send one), so it is answered only while the source has
 * `acceptHandshake: true`; the handshake is then STORED as an event of type `handshake`
 * (headers kept verbatim) so the operator — or a handler for `<source>:handshake` — reads the
 * secret and adds it to `secrets`. Without `acceptHandshake` a handshake gets 403.
 */

import { createHash } from "node:crypto";
import { z } from "zod";
import { secretSchema, unsigned } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { field, jsonOrUndefined, path, scalarText } from "./body.ts";
import { echoable, textAnswer } from "./challenges.ts";
import { defineProvider } from "./definition.ts";
import { readHeader } from "./match.ts";
import { hexBodyVerifier } from "./presets/kit.ts";
import { splitJson } from "./split.ts";
import type { IdentityContext, IdentitySpec, ProviderScheme } from "./types.ts";

/**
 * Options of the Asana scheme.
 *
 * @example
 * ```ts
 * const options: AsanaOptions = { acceptHandshake: true };
 * ```
 */
export interface AsanaOptions {
  /** Answer (and store) `X-Hook-Secret` handshakes. Default false: turn on only while creating a webhook. */
  readonly acceptHandshake?: boolean;
}

const SECRET_HEADER = "x-hook-secret";

/**
 * The Asana dedup key. For the handshake: `handshake:<first 32 hex of sha256(secret)>` (never
 * the secret itself). For an event (one item of `events`, which carry no id):
 * `<resource.gid>:<action>:<created_at>[:<change.field>]`.
 *
 * @example
 * ```ts
 * asanaEventKey(ctx); // "1203456789012345:changed:2023-11-14T22:13:20.000Z:assignee"
 * ```
 */
export function asanaEventKey(context: IdentityContext): string | undefined {
  const secret = readHeader(context.headers, SECRET_HEADER);
  if (secret !== undefined) {
    return `handshake:${createHash("sha256").update(secret).digest("hex").slice(0, 32)}`;
  }
  const item = jsonOrUndefined(context);
  const parts = [
    scalarText(path(item, "resource", "gid")),
    scalarText(field(item, "action")),
    scalarText(field(item, "created_at")),
  ];
  if (parts.some((p) => p === undefined)) return undefined;
  const changed = scalarText(path(item, "change", "field"));
  return [...parts, ...(changed === undefined ? [] : [changed])].join(":");
}

/**
 * The Asana event type: `handshake`, or `<resource.resource_type>.<action>` (`task.changed`).
 *
 * @example
 * ```ts
 * asanaEventType(ctx); // "task.added"
 * ```
 */
export function asanaEventType(context: IdentityContext): string | undefined {
  if (readHeader(context.headers, SECRET_HEADER) !== undefined) return "handshake";
  const item = jsonOrUndefined(context);
  const type = scalarText(path(item, "resource", "resource_type"));
  const action = scalarText(field(item, "action"));
  return type === undefined || action === undefined ? action : `${type}.${action}`;
}

/**
 * Where an Asana event's identity lives (per item of `events`).
 *
 * @example
 * ```ts
 * asanaIdentity.orderingKey; // "$.resource.gid"
 * ```
 */
export const asanaIdentity: IdentitySpec = Object.freeze({
  id: asanaEventKey,
  type: asanaEventType,
  occurredAt: "$.created_at",
  orderingKey: "$.resource.gid",
});

/**
 * The Asana scheme: events verified by `X-Hook-Signature` (codes as in `hmacScheme`), batches
 * split per item of `events` (an empty list, Asana's heartbeat, stores nothing); the handshake
 * answered as described above.
 *
 * @example
 * ```ts
 * const scheme = asanaScheme({ acceptHandshake: false });
 * ```
 */
export function asanaScheme(options: AsanaOptions = {}): ProviderScheme {
  return {
    provider: "asana",
    verifier: hexBodyVerifier("x-hook-signature"),
    identity: asanaIdentity,
    challenge(request) {
      const secret = readHeader(request.headers, SECRET_HEADER);
      if (secret === undefined || request.method.toUpperCase() !== "POST") return undefined;
      if (options.acceptHandshake !== true) {
        throw hookinboxError(
          "HOOKINBOX_HANDSHAKE_REJECTED",
          "set acceptHandshake: true on the source while creating the Asana webhook",
        );
      }
      const answer = textAnswer("", { [SECRET_HEADER]: echoable(secret, "X-Hook-Secret") });
      return { ...answer, store: true };
    },
    split: (request) => splitJson(request.body, ["events"]),
  };
}

/**
 * An Asana source (`X-Hook-Signature`; `X-Hook-Secret` handshake while `acceptHandshake`). Returns `{ provider: "asana", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { asana: asana({ secrets: [{ env: "ASANA_HOOK_SECRET" }] }) }
 * ```
 */
export const asana = defineProvider({
  name: "asana",
  options: {
    ...unsigned,
    // Optional: Asana hands out the secret in its handshake, after the source exists.
    secrets: z.array(secretSchema).optional(),
    acceptHandshake: z.boolean().optional(),
  },
  refine: (schema) =>
    schema.refine((s) => (s.secrets?.length ?? 0) > 0 || s.acceptHandshake === true, {
      message:
        "an asana source needs secrets, or acceptHandshake: true while its webhook is created (fail closed)",
      path: ["secrets"],
    }),
  identity: asanaIdentity,
  docs: "#asana",
  headers: { signature: ["x-hook-signature"] },
  scheme: (source) => asanaScheme({ acceptHandshake: source.acceptHandshake ?? false }),
});
