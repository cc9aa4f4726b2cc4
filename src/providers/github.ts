/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 over the raw body, no timestamp.
 * The legacy `X-Hub-Signature: sha1=<hex>` is used only when `allowSha1` is set.
 */

import { z } from "zod";
import { signed } from "../config/source-fields.ts";
import { hookinboxError, isHookinboxError } from "../errors.js";
import { decodeHex, type HmacAlgorithm, hmac } from "./crypto.js";
import { defineProvider } from "./definition.ts";
import { findMatchingSecret, readHeader, requireSecrets } from "./match.js";
import type { IdentityContext, IdentitySpec, ProviderScheme, Verified } from "./types.js";

/**
 * Options of the GitHub scheme.
 *
 * @example
 * ```ts
 * const options: GithubOptions = { allowSha1: false };
 * ```
 */
export interface GithubOptions {
  /**
   * Accept the legacy SHA-1 `X-Hub-Signature` when `X-Hub-Signature-256` is absent.
   * Off by default; when both headers are present only the SHA-256 one is checked.
   */
  readonly allowSha1?: boolean;
}

const HEADER_256 = "x-hub-signature-256";
const HEADER_SHA1 = "x-hub-signature";

/**
 * The parsed JSON body, or `undefined` when the body is not JSON (GitHub can also be set to
 * send `application/x-www-form-urlencoded`). Other errors propagate.
 */
function jsonOrUndefined(context: IdentityContext): unknown {
  try {
    return context.json();
  } catch (error) {
    if (isHookinboxError(error, "HOOKINBOX_BODY_INVALID_JSON")) return undefined;
    throw error;
  }
}

function field(value: unknown, name: string): unknown {
  return typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

/**
 * GitHub event type: `"<X-GitHub-Event>.<action>"` when the body has a string `action`
 * (`"pull_request.opened"`), else the `X-GitHub-Event` header alone (`"push"`). A non-JSON
 * body falls back to the header.
 *
 * @example
 * ```ts
 * githubEventType({ headers, json: () => ({ action: "opened" }) }); // "pull_request.opened"
 * ```
 */
export function githubEventType(context: IdentityContext): string | undefined {
  const event = context.headers.get("x-github-event");
  if (event === undefined || event === "") return undefined;
  const action = field(jsonOrUndefined(context), "action");
  return typeof action === "string" && action !== "" ? `${event}.${action}` : event;
}

/** Resources keyed by their own id inside a repository: payload field → key segment. */
const resourcesById: ReadonlyArray<readonly [string, string]> = [
  ["check_run", "check-runs"],
  ["check_suite", "check-suites"],
  ["workflow_run", "workflow-runs"],
  ["workflow_job", "workflow-jobs"],
  ["deployment", "deployments"],
  ["release", "releases"],
  ["milestone", "milestones"],
  ["label", "labels"],
  ["package", "packages"],
];

/**
 * GitHub ordering key: the resource an event is about, so one dead delivery parks only that
 * resource's later events, never a whole repository's. In order:
 *
 * - an issue or pull request (they share one number space, so comments, reviews and state changes
 *   of one PR are ordered together): `"<owner>/<repo>#<number>"`;
 * - a discussion: `"<owner>/<repo>/discussions/<number>"`;
 * - a check run or suite, workflow run or job, deployment (and its statuses), release, milestone,
 *   label or package: `"<owner>/<repo>/<kind>/<id>"`, e.g. `"octo/hello/check-runs/4"`;
 * - a branch or tag (`push`, `create`, `delete`): `"<owner>/<repo>@refs/heads/main"`;
 * - else the repository, `"<owner>/<repo>"`, and `undefined` without one (organisation-level
 *   events, non-JSON bodies).
 *
 * @example
 * ```ts
 * githubOrderingKey(ctx); // "octo/hello#42"
 * ```
 */
export function githubOrderingKey(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  const repository = field(field(body, "repository"), "full_name");
  if (typeof repository !== "string" || repository === "") return undefined;
  const number =
    field(field(body, "pull_request"), "number") ?? field(field(body, "issue"), "number");
  if (isId(number)) return `${repository}#${number}`;
  const discussion = field(field(body, "discussion"), "number");
  if (isId(discussion)) return `${repository}/discussions/${discussion}`;
  for (const [name, segment] of resourcesById) {
    const id = field(field(body, name), "id");
    if (isId(id)) return `${repository}/${segment}/${id}`;
  }
  const ref = field(body, "ref");
  if (typeof ref === "string" && ref !== "") {
    const refType = field(body, "ref_type");
    const full =
      ref.startsWith("refs/") || (refType !== "branch" && refType !== "tag")
        ? ref
        : `refs/${refType === "branch" ? "heads" : "tags"}/${ref}`;
    return `${repository}@${full}`;
  }
  return repository;
}

/** A positive integer id, as GitHub writes ids and numbers. */
function isId(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value > 0;
}

/**
 * Where a GitHub event's identity lives: the delivery id header (stable across redeliveries),
 * the event type from {@link githubEventType}, and the ordering key from
 * {@link githubOrderingKey}. GitHub payloads have no common occurrence time or version.
 *
 * @example
 * ```ts
 * githubIdentity.id; // "header:x-github-delivery"
 * ```
 */
export const githubIdentity: IdentitySpec = Object.freeze({
  id: "header:x-github-delivery",
  type: githubEventType,
  orderingKey: githubOrderingKey,
});

/**
 * The GitHub scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. neither signature header → HOOKINBOX_SIGNATURE_MISSING; only the legacy SHA-1 header and
 *    `allowSha1` off → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED;
 * 3. a value without `=` → HOOKINBOX_SIGNATURE_MALFORMED; a prefix other than the expected
 *    `sha256` (or `sha1` in the legacy header) → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED;
 * 4. a digest that is not hex (truncated, odd length…) matches nothing; no active secret
 *    matches → HOOKINBOX_SIGNATURE_MISMATCH.
 *
 * @example
 * ```ts
 * const scheme = githubScheme({});
 * scheme.verifier.verify(request, [{ index: 0, value: "It's a Secret to Everybody" }], Date.now());
 * ```
 */
export function githubScheme(options: GithubOptions = {}): ProviderScheme {
  const allowSha1 = options.allowSha1 === true;
  return {
    provider: "github",
    identity: githubIdentity,
    verifier: {
      verify(request, secrets): Verified {
        requireSecrets(secrets);
        let header = readHeader(request.headers, HEADER_256);
        let algorithm: HmacAlgorithm = "sha256";
        let name = HEADER_256;
        if (header === undefined) {
          const legacy = readHeader(request.headers, HEADER_SHA1);
          if (legacy === undefined) {
            throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", `expected header ${HEADER_256}`);
          }
          if (!allowSha1) {
            throw hookinboxError(
              "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
              `only the legacy SHA-1 ${HEADER_SHA1} is present and allowSha1 is off`,
            );
          }
          header = legacy;
          algorithm = "sha1";
          name = HEADER_SHA1;
        }
        const eq = header.indexOf("=");
        if (eq < 0) {
          throw hookinboxError(
            "HOOKINBOX_SIGNATURE_MALFORMED",
            `expected ${algorithm}=… in ${name}`,
          );
        }
        if (header.slice(0, eq) !== algorithm) {
          throw hookinboxError(
            "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
            `expected ${algorithm}=… in ${name}`,
          );
        }
        const digest = decodeHex(header.slice(eq + 1));
        const secretIndex = findMatchingSecret(
          secrets,
          nonEmpty,
          (key) => hmac(algorithm, key, [request.body]),
          digest === undefined ? [] : [digest],
        );
        return { secretIndex };
      },
    },
  };
}

function nonEmpty(secret: string): string | undefined {
  return secret.length > 0 ? secret : undefined;
}

/**
 * A GitHub source (`X-Hub-Signature-256`, id from `X-GitHub-Delivery`). Returns `{ provider: "github", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { github: github({ secrets: [{ env: "GITHUB_WEBHOOK_SECRET" }] }) }
 * ```
 */
export const github = defineProvider({
  name: "github",
  options: { ...signed, allowSha1: z.boolean().optional() },
  identity: githubIdentity,
  docs: "#github",
  headers: {
    signature: ["x-hub-signature-256", "x-hub-signature"],
    context: [
      "x-github-event",
      "x-github-delivery",
      "x-github-hook-id",
      "x-github-hook-installation-target-id",
      "x-github-hook-installation-target-type",
    ],
  },
  scheme: (source) => githubScheme({ allowSha1: source.allowSha1 ?? false }),
});
