/**
 * GitLab. Two ways to authenticate a webhook:
 * - the secret token: GitLab sends the configured token itself in `X-Gitlab-Token` (nothing is
 *   signed; the token is compared in constant time);
 * - the signing token (GitLab 18.x, behind a feature flag at first): a `whsec_<base64>` key with
 *   which GitLab signs Standard Webhooks headers (`webhook-id`, equal to `Idempotency-Key`,
 *   `webhook-timestamp`, `webhook-signature: v1,<base64>`).
 *
 * Decision: a source lists both kinds of secret in `secrets`; those starting with `whsec_` are
 * signing tokens. When a request carries `webhook-signature` and the source has a signing token,
 * the signature is verified INSTEAD of the token (it proves the body and the time, the token
 * proves neither), and a bad signature is rejected even if the token is right. Otherwise the
 * token is checked. `requireSignature: true` refuses token-only requests, so a leaked token (it
 * travels in every request, and proxies log headers) cannot be used to forge events.
 */

import { z } from "zod";
import { duration, signed } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import { field, jsonOrUndefined, path, scalarText } from "./body.ts";
import { defineProvider } from "./definition.ts";
import { readHeader, requireHeader, requireSecrets } from "./match.ts";
import { standardWebhooksScheme } from "./standard-webhooks.ts";
import { matchToken } from "./token.ts";
import type { IdentityContext, IdentitySpec, ProviderScheme, Verified } from "./types.ts";

/**
 * Options of the GitLab scheme.
 *
 * @example
 * ```ts
 * const options: GitlabOptions = { toleranceMs: 300_000, requireSignature: false };
 * ```
 */
export interface GitlabOptions {
  /** Window for `webhook-timestamp` when a signature is verified, both ways, in ms. Default 300 000. */
  readonly toleranceMs?: number;
  /** Refuse requests that are not signed with a signing token (no token-only fallback). Default false. */
  readonly requireSignature?: boolean;
}

const TOKEN_HEADER = "x-gitlab-token";
const SIGNATURE_HEADER = "webhook-signature";
const SIGNING_PREFIX = "whsec_";

/**
 * The GitLab dedup key: `Idempotency-Key` (GitLab 17.4+, the same on every retry of one
 * delivery), else `X-Gitlab-Event-UUID`.
 *
 * @example
 * ```ts
 * gitlabEventId(ctx); // "f6b2c1a4-…"
 * ```
 */
export function gitlabEventId(context: IdentityContext): string | undefined {
  return (
    readHeader(context.headers, "idempotency-key") ??
    readHeader(context.headers, "x-gitlab-event-uuid")
  );
}

/**
 * The GitLab ordering key: `<project path>!<iid>` for merge requests (and notes on them),
 * `<project path>#<iid>` for issues (and notes on them), else the project path
 * (`project.path_with_namespace`); group and system events have none.
 *
 * @example
 * ```ts
 * gitlabOrderingKey(ctx); // "group/app!42"
 * ```
 */
export function gitlabOrderingKey(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  const project = scalarText(path(body, "project", "path_with_namespace"));
  if (project === undefined) return undefined;
  const kind = field(body, "object_kind");
  const iid = scalarText(path(body, "object_attributes", "iid"));
  if (kind === "merge_request" && iid !== undefined) return `${project}!${iid}`;
  if ((kind === "issue" || kind === "work_item") && iid !== undefined) return `${project}#${iid}`;
  if (kind === "note") {
    const mr = scalarText(path(body, "merge_request", "iid"));
    if (mr !== undefined) return `${project}!${mr}`;
    const issue = scalarText(path(body, "issue", "iid"));
    if (issue !== undefined) return `${project}#${issue}`;
  }
  return project;
}

/**
 * Where a GitLab event's identity lives: {@link gitlabEventId}, the `X-Gitlab-Event` header as
 * type (`"Push Hook"`, `"Merge Request Hook"`), and {@link gitlabOrderingKey}.
 *
 * @example
 * ```ts
 * gitlabIdentity.type; // "header:x-gitlab-event"
 * ```
 */
export const gitlabIdentity: IdentitySpec = Object.freeze({
  id: gitlabEventId,
  type: "header:x-gitlab-event",
  orderingKey: gitlabOrderingKey,
});

/**
 * The GitLab scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. `webhook-signature` present and an active secret starts with `whsec_`: Standard Webhooks
 *    verification with those secrets only (codes as in `standardWebhooksScheme`, window
 *    `toleranceMs`); the token is not consulted;
 * 3. `requireSignature` on: no `webhook-signature` → HOOKINBOX_SIGNATURE_MISSING; no `whsec_`
 *    secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 4. else `X-Gitlab-Token` absent or blank → HOOKINBOX_SIGNATURE_MISSING; compared with every
 *    non-blank active secret (both trimmed, as HTTP trims header values) through SHA-256
 *    digests (constant time, length not revealed); no match → HOOKINBOX_SIGNATURE_MISMATCH.
 *
 * @example
 * ```ts
 * const scheme = gitlabScheme();
 * scheme.verifier.verify(request, [{ index: 0, value: "gitlab secret token" }], Date.now());
 * ```
 */
export function gitlabScheme(options: GitlabOptions = {}): ProviderScheme {
  const signed = standardWebhooksScheme({ toleranceMs: options.toleranceMs ?? 300_000 });
  const requireSignature = options.requireSignature === true;
  return {
    provider: "gitlab",
    identity: gitlabIdentity,
    verifier: {
      verify(request, secrets, nowMs): Verified {
        requireSecrets(secrets);
        const signingSecrets = secrets.filter((s) => s.value.startsWith(SIGNING_PREFIX));
        const hasSignature = readHeader(request.headers, SIGNATURE_HEADER) !== undefined;
        if (hasSignature && signingSecrets.length > 0) {
          return signed.verifier.verify(request, signingSecrets, nowMs);
        }
        if (requireSignature) {
          if (!hasSignature) {
            throw hookinboxError(
              "HOOKINBOX_SIGNATURE_MISSING",
              `expected header ${SIGNATURE_HEADER}`,
            );
          }
          throw hookinboxError(
            "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
            "requireSignature is on but no active secret is a whsec_ signing token",
          );
        }
        // HTTP strips whitespace around header values, so a token is compared trimmed too.
        return matchToken(requireHeader(request.headers, TOKEN_HEADER), secrets);
      },
    },
  };
}

/**
 * A GitLab source (`X-Gitlab-Token`, or signing tokens). Returns `{ provider: "gitlab", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { gitlab: gitlab({ secrets: [{ env: "GITLAB_TOKEN" }] }) }
 * ```
 */
export const gitlab = defineProvider({
  name: "gitlab",
  options: {
    ...signed,
    tolerance: duration.optional(),
    requireSignature: z.boolean().optional(),
  },
  identity: gitlabIdentity,
  docs: "#gitlab",
  headers: {
    signature: ["x-gitlab-token", "webhook-id", "webhook-timestamp", "webhook-signature"],
    context: [
      "x-gitlab-event",
      "x-gitlab-event-uuid",
      "x-gitlab-webhook-uuid",
      "x-gitlab-instance",
      "idempotency-key",
    ],
  },
  scheme: (source, context) =>
    gitlabScheme({
      ...context.window,
      ...(source.requireSignature === undefined
        ? {}
        : { requireSignature: source.requireSignature }),
    }),
});
