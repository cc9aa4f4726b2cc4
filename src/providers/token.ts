/**
 * Shared-token authentication: the provider sends a configured secret itself (GitLab's
 * `X-Gitlab-Token`, Telegram's `X-Telegram-Bot-Api-Secret-Token`, Okta's authorization header,
 * Postmark's basic-auth credentials, a token in the URL). Nothing is signed, so the token proves
 * only that the sender knows it; it is compared in constant time through SHA-256 digests so
 * neither its bytes nor its length leak through timing.
 */

import { createHash } from "node:crypto";
import { hookinboxError } from "../errors.ts";
import { queryParams } from "./body.ts";
import { constantTimeEqual } from "./crypto.ts";
import { readHeader, requireHeader, requireSecrets } from "./match.ts";
import type { ActiveSecret, SignedRequest, Verified, Verifier } from "./types.ts";

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

/**
 * Finds the active secret equal to `received` (both trimmed, as HTTP trims header values).
 *
 * @throws HookinboxError HOOKINBOX_SIGNATURE_MISMATCH when none is, or
 *   HOOKINBOX_SOURCE_NO_ACTIVE_SECRET when every active secret is blank.
 * @example
 * ```ts
 * matchToken(request.headers.get("x-gitlab-token") ?? "", secrets); // { secretIndex: 0 }
 * ```
 */
export function matchToken(received: string, secrets: readonly ActiveSecret[]): Verified {
  const expected = digest(received.trim());
  let usable = 0;
  for (const secret of secrets) {
    const token = secret.value.trim();
    if (token.length === 0) continue;
    usable++;
    if (constantTimeEqual(digest(token), expected)) return { secretIndex: secret.index };
  }
  if (usable === 0) throw hookinboxError("HOOKINBOX_SOURCE_NO_ACTIVE_SECRET");
  throw hookinboxError("HOOKINBOX_SIGNATURE_MISMATCH");
}

/**
 * Where the token travels.
 * - `header`: the header's whole value is the token (Telegram, GitLab, Okta);
 * - `basic`: `Authorization: Basic base64(user:password)` and each secret is `user:password`
 *   (Postmark puts the credentials in the webhook URL, which clients send this way);
 * - `query`: a query parameter of the request URL (providers that can only call a URL).
 *
 * @example
 * ```ts
 * const where: TokenLocation = { kind: "header", name: "x-telegram-bot-api-secret-token" };
 * ```
 */
export type TokenLocation =
  | { readonly kind: "header"; readonly name: string }
  | { readonly kind: "basic" }
  | { readonly kind: "query"; readonly name: string };

/**
 * Reads the token a request carries.
 *
 * @throws HookinboxError HOOKINBOX_SIGNATURE_MISSING when absent, HOOKINBOX_SIGNATURE_MALFORMED
 *   when a basic-auth header is not `Basic <base64 of user:password>`.
 * @example
 * ```ts
 * receivedToken(request, { kind: "basic" }); // "user:password"
 * ```
 */
export function receivedToken(request: SignedRequest, where: TokenLocation): string {
  if (where.kind === "header") return requireHeader(request.headers, where.name);
  if (where.kind === "query") {
    const value = queryParams(request.url).get(where.name);
    if (value === null || value.trim() === "") {
      throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", `expected query parameter ${where.name}`);
    }
    return value;
  }
  const value = readHeader(request.headers, "authorization");
  if (value === undefined) {
    throw hookinboxError("HOOKINBOX_SIGNATURE_MISSING", "expected header authorization");
  }
  const match = /^basic\s+([A-Za-z0-9+/]+={0,2})$/i.exec(value);
  const decoded = match?.[1] === undefined ? "" : Buffer.from(match[1], "base64").toString("utf8");
  if (!decoded.includes(":")) {
    throw hookinboxError(
      "HOOKINBOX_SIGNATURE_MALFORMED",
      "expected Authorization: Basic <base64 of user:password>",
    );
  }
  return decoded;
}

/**
 * A verifier that checks a shared token. Verification, in order: no active secret →
 * HOOKINBOX_SOURCE_NO_ACTIVE_SECRET; token absent → HOOKINBOX_SIGNATURE_MISSING; malformed
 * basic auth → HOOKINBOX_SIGNATURE_MALFORMED; no secret equals it → HOOKINBOX_SIGNATURE_MISMATCH.
 *
 * @example
 * ```ts
 * const verifier = tokenVerifier({ kind: "header", name: "x-telegram-bot-api-secret-token" });
 * verifier.verify(request, [{ index: 0, value: "s3cr3t" }], Date.now()); // { secretIndex: 0 }
 * ```
 */
export function tokenVerifier(where: TokenLocation): Verifier {
  return {
    verify(request, secrets) {
      requireSecrets(secrets);
      return matchToken(receivedToken(request, where), secrets);
    },
  };
}
