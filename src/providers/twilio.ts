/**
 * Twilio: `X-Twilio-Signature: <base64>`, HMAC-SHA1 keyed with the account's auth token (UTF-8)
 * over the full public URL Twilio called (with its query) followed by every POST parameter,
 * sorted by name, written as name + value with nothing between. A body that is not a form (JSON,
 * e.g. Event Streams sinks) is not parameterised: instead the URL carries
 * `bodySHA256=<hex(sha256(body))>`, the signature covers the URL alone, and the body must hash
 * to that value.
 *
 * Twilio signs the URL it was configured with, which a proxy in front of hookinbox changes;
 * hence the `publicUrl` option. Like the official helper (`validateRequest`), the URL is tried
 * both without its port and with the scheme's default port (`:443` / `:80`).
 */

import { createHash } from "node:crypto";
import { publicUrl, signed } from "../config/source-fields.ts";
import { hookinboxError } from "../errors.ts";
import {
  checkPublicUrl,
  contextForm,
  field,
  formParams,
  fullUrl,
  jsonOrUndefined,
  queryParams,
  scalarText,
} from "./body.ts";
import { constantTimeEqual, decodeBase64, decodeHex, hmac } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import { findMatchingSecretAmong, requireHeader, requireSecrets, utf8Secret } from "./match.ts";
import type { IdentityContext, IdentitySpec, ProviderScheme, Verified } from "./types.ts";

/**
 * Options of the Twilio scheme.
 *
 * @example
 * ```ts
 * const options: TwilioOptions = { publicUrl: "https://hooks.example.com" };
 * ```
 */
export interface TwilioOptions {
  /**
   * The public base URL Twilio calls, e.g. `"https://hooks.example.com"` (a path prefix is
   * allowed); the request's path and query as received are appended to it.
   */
  readonly publicUrl: string;
}

const HEADER = "x-twilio-signature";
const IDEMPOTENCY_HEADER = "i-twilio-idempotency-token";

/**
 * The string Twilio appends to the URL: parameter names sorted (UTF-16 order, as the helper's
 * `sort()`), and for a repeated name its distinct values sorted, each as name + value.
 *
 * @example
 * ```ts
 * twilioParamString(new URLSearchParams("To=%2B1&CallSid=CA1")); // "CallSidCA1To+1"
 * ```
 */
export function twilioParamString(params: URLSearchParams): string {
  const byName = new Map<string, Set<string>>();
  for (const [name, value] of params) {
    let values = byName.get(name);
    if (values === undefined) {
      values = new Set();
      byName.set(name, values);
    }
    values.add(value);
  }
  let data = "";
  for (const name of [...byName.keys()].sort()) {
    for (const value of [...(byName.get(name) ?? [])].sort()) data += name + value;
  }
  return data;
}

const AUTHORITY = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i;

/**
 * The URL spelled without its port and with the scheme's default port, as the official helper
 * tries them (one entry when both spellings are the same).
 *
 * @example
 * ```ts
 * twilioUrlVariants("https://a.example/x"); // ["https://a.example/x", "https://a.example:443/x"]
 * ```
 */
export function twilioUrlVariants(url: string): string[] {
  const match = AUTHORITY.exec(url);
  if (match === null) return [url];
  const scheme = match[1] ?? "";
  const authority = match[2] ?? "";
  const userInfoEnd = authority.lastIndexOf("@");
  const userInfo = authority.slice(0, userInfoEnd + 1);
  const hostAndPort = authority.slice(userInfoEnd + 1);
  const portStart = hostAndPort.indexOf(":", hostAndPort.lastIndexOf("]") + 1);
  const host = portStart < 0 ? hostAndPort : hostAndPort.slice(0, portStart);
  const port = portStart < 0 ? "" : hostAndPort.slice(portStart);
  const rest = url.slice(match[0].length);
  const withoutPort = scheme + userInfo + host + rest;
  const defaultPort = scheme.toLowerCase() === "https://" ? ":443" : ":80";
  const withPort = port === "" ? scheme + userInfo + host + defaultPort + rest : url;
  return withoutPort === withPort ? [withoutPort] : [withoutPort, withPort];
}

/** Reads a named field from a form body, or from a JSON object body. */
function twilioField(context: IdentityContext, name: string): string | undefined {
  const form = contextForm(context);
  if (form !== undefined) return form.get(name) || undefined;
  return scalarText(field(jsonOrUndefined(context), name));
}

/** Resource kinds, most specific first: a recording callback also carries its CallSid. */
const RESOURCES = [
  { kind: "recording", sid: "RecordingSid", status: ["RecordingStatus"] },
  { kind: "transcription", sid: "TranscriptionSid", status: ["TranscriptionStatus"] },
  { kind: "message", sid: "MessageSid", status: ["MessageStatus", "SmsStatus"] },
  { kind: "call", sid: "CallSid", status: ["CallStatus"] },
] as const;

function twilioResource(
  context: IdentityContext,
): { kind: string; sid: string; status: string | undefined } | undefined {
  for (const resource of RESOURCES) {
    const sid = twilioField(context, resource.sid);
    if (sid === undefined) continue;
    let status: string | undefined;
    for (const name of resource.status) status ??= twilioField(context, name);
    return { kind: resource.kind, sid, status };
  }
  return undefined;
}

/**
 * The Twilio dedup key: the `I-Twilio-Idempotency-Token` header, which Twilio keeps across
 * retries of one webhook. Without it, a synthetic key from the resource the callback is about
 * and its state: `<kind>:<Sid>:<status>[:<SequenceNumber>]`, kind being `recording`,
 * `transcription`, `message` or `call` (e.g. `message:SM123:delivered`, `call:CA1:completed:3`).
 * Caveat: two callbacks about one resource in one state (two `<Gather>` actions of one call)
 * share that key; rely on the header for those. No Sid → no id (HOOKINBOX_EVENT_ID_MISSING).
 * Form bodies need `context.body`.
 *
 * @example
 * ```ts
 * twilioEventId(ctx); // "a2b7…-idempotency-token" | "message:SM1:delivered"
 * ```
 */
export function twilioEventId(context: IdentityContext): string | undefined {
  const token = context.headers.get(IDEMPOTENCY_HEADER)?.trim();
  if (token !== undefined && token !== "") return token;
  const resource = twilioResource(context);
  if (resource === undefined || resource.status === undefined) return undefined;
  const sequence = twilioField(context, "SequenceNumber");
  const key = `${resource.kind}:${resource.sid}:${resource.status}`;
  return sequence === undefined ? key : `${key}:${sequence}`;
}

/**
 * A synthetic Twilio event type, `<kind>.<status>` (`message.delivered`, `call.completed`,
 * `recording.completed`), or the kind alone when there is no status field.
 *
 * @example
 * ```ts
 * twilioEventType(ctx); // "message.delivered"
 * ```
 */
export function twilioEventType(context: IdentityContext): string | undefined {
  const resource = twilioResource(context);
  if (resource === undefined) return undefined;
  return resource.status === undefined ? resource.kind : `${resource.kind}.${resource.status}`;
}

/**
 * The Twilio ordering key: the Sid of the resource (`SM…`, `CA…`, `RE…`).
 *
 * @example
 * ```ts
 * twilioOrderingKey(ctx); // "CA1234567890ABCDE"
 * ```
 */
export function twilioOrderingKey(context: IdentityContext): string | undefined {
  return twilioResource(context)?.sid;
}

/**
 * Where a Twilio event's identity lives: {@link twilioEventId}, {@link twilioEventType},
 * {@link twilioOrderingKey}, the call-progress `SequenceNumber` as version and the `Timestamp`
 * field (RFC 2822, status callbacks) as occurrence time.
 *
 * @example
 * ```ts
 * twilioIdentity.id === twilioEventId; // true
 * ```
 */
export const twilioIdentity: IdentitySpec = Object.freeze({
  id: twilioEventId,
  type: twilioEventType,
  orderingKey: twilioOrderingKey,
  version: (context: IdentityContext) => twilioField(context, "SequenceNumber"),
  occurredAt: (context: IdentityContext) => twilioField(context, "Timestamp"),
});

/**
 * The Twilio scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. `x-twilio-signature` absent or blank → HOOKINBOX_SIGNATURE_MISSING;
 * 3. the signed string: `publicUrl` + the request's path and query, each port spelling (see
 *    {@link twilioUrlVariants}), followed by the sorted form parameters of the body (see
 *    {@link twilioParamString}), or by nothing when the query has `bodySHA256`;
 * 4. every active secret × every URL spelling; a value that is not canonical base64 matches
 *    nothing; no match → HOOKINBOX_SIGNATURE_MISMATCH;
 * 5. with `bodySHA256`: the body's SHA-256 must equal it (hex, either case), else
 *    HOOKINBOX_SIGNATURE_MISMATCH.
 * Twilio signs no timestamp: a captured request can be replayed; dedup absorbs exact replays.
 *
 * @example
 * ```ts
 * const scheme = twilioScheme({ publicUrl: "https://hooks.example.com" });
 * scheme.verifier.verify(request, [{ index: 0, value: "auth-token" }], Date.now());
 * ```
 */
export function twilioScheme(options: TwilioOptions): ProviderScheme {
  const base = checkPublicUrl(options.publicUrl, "publicUrl");
  return {
    provider: "twilio",
    identity: twilioIdentity,
    verifier: {
      verify(request, secrets): Verified {
        requireSecrets(secrets);
        const signature = decodeBase64(requireHeader(request.headers, HEADER));
        const urls = twilioUrlVariants(fullUrl(base, request.url));
        const bodyHash = queryParams(request.url).get("bodySHA256");
        const params = bodyHash === null ? twilioParamString(formParams(request.body)) : "";
        const secretIndex = findMatchingSecretAmong(
          secrets,
          utf8Secret,
          (key) => urls.map((url) => hmac("sha1", key, [url, params])),
          signature === undefined ? [] : [signature],
        );
        if (bodyHash !== null) {
          const expected = createHash("sha256").update(request.body).digest();
          const received = decodeHex(bodyHash);
          if (received === undefined || !constantTimeEqual(expected, received)) {
            throw hookinboxError(
              "HOOKINBOX_SIGNATURE_MISMATCH",
              "the body does not match the signed bodySHA256",
            );
          }
        }
        return { secretIndex };
      },
    },
  };
}

/**
 * A Twilio source (signs the public URL). Returns `{ provider: "twilio", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { twilio: twilio({ secrets: [{ env: "TWILIO_AUTH_TOKEN" }], publicUrl: "https://hooks.example.com" }) }
 * ```
 */
export const twilio = defineProvider({
  name: "twilio",
  options: { ...signed, publicUrl: publicUrl.optional() },
  identity: twilioIdentity,
  docs: "#twilio",
  headers: { signature: ["x-twilio-signature"], context: ["i-twilio-idempotency-token"] },
  scheme: (source, context) =>
    twilioScheme({
      publicUrl: context.publicUrl(
        source.publicUrl,
        "publicUrl",
        "Twilio signs the public URL it calls",
      ),
    }),
});
