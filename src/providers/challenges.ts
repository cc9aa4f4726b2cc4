/**
 * Endpoint challenges beyond POST: the handshakes Meta, Dropbox, Okta, Microsoft Graph and Asana
 * send to prove an endpoint before (or besides) their signed events. Each answers only the
 * exact shape its provider documents; anything else is not a challenge (`undefined`).
 */

import { hookinboxError } from "../errors.ts";
import { queryParams } from "./body.ts";
import { matchToken } from "./token.ts";
import type { ActiveSecret, ChallengeAnswer, SignedRequest } from "./types.ts";

/** Longest challenge value echoed; providers send short random strings. */
const MAX_CHALLENGE = 512;
/** Printable ASCII without spaces: what the providers' random challenges are made of. */
const CHALLENGE_TEXT = /^[\x21-\x7e]+$/;

/**
 * A `text/plain` answer (with `nosniff`, so a reflected value is never run as HTML or script).
 *
 * @example
 * ```ts
 * textAnswer("1158201444"); // { response: { status: 200, headers: {…}, body: "1158201444" } }
 * ```
 */
export function textAnswer(body: string, headers: Record<string, string> = {}): ChallengeAnswer {
  return {
    response: {
      status: 200,
      headers: {
        "content-type": "text/plain; charset=utf-8",
        "x-content-type-options": "nosniff",
        ...headers,
      },
      body,
    },
  };
}

/**
 * Checks a value that will be echoed back: non-empty printable ASCII, at most 512 characters.
 *
 * @throws HookinboxError HOOKINBOX_HANDSHAKE_REJECTED otherwise.
 * @example
 * ```ts
 * echoable("1158201444", "hub.challenge"); // "1158201444"
 * ```
 */
export function echoable(value: string | null | undefined, name: string): string {
  if (
    value === null ||
    value === undefined ||
    value.length > MAX_CHALLENGE ||
    !CHALLENGE_TEXT.test(value)
  ) {
    throw hookinboxError(
      "HOOKINBOX_HANDSHAKE_REJECTED",
      `${name} must be 1 to ${MAX_CHALLENGE} printable characters`,
    );
  }
  return value;
}

/**
 * Meta's (WhatsApp, Messenger, Instagram) verification request:
 * `GET ?hub.mode=subscribe&hub.verify_token=<token>&hub.challenge=<n>`. Answered with the
 * challenge only when the mode is `subscribe` and the token equals one of `verifyTokens`
 * (constant time); else 403, as Meta documents. A GET without `hub.mode` is not this challenge.
 *
 * @example
 * ```ts
 * metaVerification(request, ["my verify token"]); // text answer "1158201444"
 * ```
 */
export function metaVerification(
  request: SignedRequest,
  verifyTokens: readonly string[],
): ChallengeAnswer | undefined {
  if (request.method.toUpperCase() !== "GET") return undefined;
  const query = queryParams(request.url);
  const mode = query.get("hub.mode");
  if (mode === null) return undefined;
  const token = query.get("hub.verify_token") ?? "";
  const active: ActiveSecret[] = verifyTokens.map((value, index) => ({ index, value }));
  if (mode !== "subscribe" || token === "" || !matches(token, active)) {
    throw hookinboxError("HOOKINBOX_HANDSHAKE_REJECTED", "hub.verify_token does not match");
  }
  return textAnswer(echoable(query.get("hub.challenge"), "hub.challenge"));
}

function matches(token: string, secrets: readonly ActiveSecret[]): boolean {
  try {
    matchToken(token, secrets);
    return true;
  } catch {
    return false;
  }
}

/**
 * Dropbox's verification request: `GET ?challenge=<random>`, to be echoed as `text/plain` with
 * `X-Content-Type-Options: nosniff`. Dropbox does not sign it, so nothing can be verified: the
 * echo reveals nothing (the caller gets its own string back) and stores nothing.
 *
 * @example
 * ```ts
 * dropboxChallenge(request); // text answer "a1b2c3"
 * ```
 */
export function dropboxChallenge(request: SignedRequest): ChallengeAnswer | undefined {
  if (request.method.toUpperCase() !== "GET") return undefined;
  const challenge = queryParams(request.url).get("challenge");
  if (challenge === null) return undefined;
  return textAnswer(echoable(challenge, "challenge"));
}

/**
 * Microsoft Graph's validation request: a POST (Graph also documents it as the first request
 * to a new subscription's URL) with `?validationToken=<token>` and no body, to be echoed as
 * `text/plain` within 10 s. Graph does not sign it (notifications carry `clientState`, checked
 * as the secret); like Dropbox's, the echo reveals nothing and stores nothing.
 *
 * @example
 * ```ts
 * graphValidation(request); // text answer "Validation: Testing client application"
 * ```
 */
export function graphValidation(request: SignedRequest): ChallengeAnswer | undefined {
  const token = queryParams(request.url).get("validationToken");
  if (token === null) return undefined;
  if (token.length === 0 || token.length > MAX_CHALLENGE || /\p{Cc}/u.test(token)) {
    throw hookinboxError(
      "HOOKINBOX_HANDSHAKE_REJECTED",
      `validationToken must be 1 to ${MAX_CHALLENGE} characters without control characters`,
    );
  }
  return textAnswer(token);
}
