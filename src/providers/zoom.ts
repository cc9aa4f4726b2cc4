/**
 * Zoom: `x-zm-signature: v0=<hex>`, HMAC-SHA256 over `v0:{x-zm-request-timestamp}:{raw body}`
 * keyed with the app's webhook secret token (UTF-8); the timestamp is integer seconds. Zoom
 * also checks the endpoint with an `endpoint.url_validation` event that must be answered with
 * `{plainToken, encryptedToken: hex(HMAC-SHA256(secret token, plainToken))}`.
 */

import { signedWithTolerance } from "../config/source-fields.ts";
import { field, jsonOrUndefined, parseJsonOrUndefined, path, scalarText } from "./body.ts";
import { asBuffer, hmac } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import { checkTolerance } from "./timestamps.ts";
import type {
  ActiveSecret,
  HandshakeResponse,
  IdentityContext,
  IdentitySpec,
  ProviderScheme,
  SignedRequest,
  Verified,
} from "./types.ts";
import { v0Verifier } from "./v0-signature.ts";

/**
 * Options of the Zoom scheme.
 *
 * @example
 * ```ts
 * const options: ZoomOptions = { toleranceMs: 300_000 };
 * ```
 */
export interface ZoomOptions {
  /**
   * How far `x-zm-request-timestamp` may be from now, both ways, in ms. Default 300 000 (Zoom
   * documents no window; 5 min is the common choice, `Infinity` disables it).
   */
  readonly toleranceMs?: number;
}

const HEADER = "x-zm-signature";
const TIMESTAMP_HEADER = "x-zm-request-timestamp";

/**
 * The Zoom dedup key. Zoom documents no event id, so the key is built from named fields:
 * `<event>:<event_ts>:<payload.object.id>` (`meeting.started:1700000000123:85746065`). `event_ts`
 * is the time (ms) Zoom stamped on the event, unchanged on retries; `event` and the object keep
 * two events of the same millisecond apart. Objects without `id` use `payload.object.uuid`,
 * else the object part is empty. No `event` or `event_ts` → no id (HOOKINBOX_EVENT_ID_MISSING).
 *
 * @example
 * ```ts
 * zoomEventKey(ctx); // "meeting.started:1700000000123:85746065"
 * ```
 */
export function zoomEventKey(context: IdentityContext): string | undefined {
  const body = jsonOrUndefined(context);
  const event = scalarText(field(body, "event"));
  const at = scalarText(field(body, "event_ts"));
  if (event === undefined || at === undefined) return undefined;
  const object =
    scalarText(path(body, "payload", "object", "id")) ??
    scalarText(path(body, "payload", "object", "uuid")) ??
    "";
  return `${event}:${at}:${object}`;
}

/**
 * Where a Zoom event's identity lives: {@link zoomEventKey}, `event` as type, `event_ts` (ms)
 * as occurrence time, and the object (`payload.object.id`, a meeting, user, recording…) as
 * ordering key.
 *
 * @example
 * ```ts
 * zoomIdentity.type; // "$.event"
 * ```
 */
export const zoomIdentity: IdentitySpec = Object.freeze({
  id: zoomEventKey,
  type: "$.event",
  occurredAt: "$.event_ts",
  orderingKey: "$.payload.object.id",
});

const URL_VALIDATION = Buffer.from('"endpoint.url_validation"');

/**
 * Zoom's `endpoint.url_validation` handshake: answered `200 application/json` with
 * `{"plainToken":"…","encryptedToken":"<hex HMAC-SHA256 of plainToken keyed with the secret>"}`,
 * using the secret that verified the request. Anything else is not a handshake (`undefined`).
 *
 * @example
 * ```ts
 * zoomHandshake(request, verified, secret)?.body; // '{"plainToken":"qgg8…","encryptedToken":"23a8…"}'
 * ```
 */
export function zoomHandshake(
  request: SignedRequest,
  _verified: Verified,
  secret: ActiveSecret,
): HandshakeResponse | undefined {
  if (!asBuffer(request.body).includes(URL_VALIDATION)) return undefined;
  const body = parseJsonOrUndefined(request.body);
  if (field(body, "event") !== "endpoint.url_validation") return undefined;
  const plainToken = path(body, "payload", "plainToken");
  if (typeof plainToken !== "string") return undefined;
  const encryptedToken = hmac("sha256", secret.value, [plainToken]).toString("hex");
  return {
    status: 200,
    headers: { "content-type": "application/json; charset=utf-8" },
    body: JSON.stringify({ plainToken, encryptedToken }),
  };
}

/**
 * The Zoom scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. `x-zm-signature` absent or blank → HOOKINBOX_SIGNATURE_MISSING; no `=` →
 *    HOOKINBOX_SIGNATURE_MALFORMED; a tag other than `v0` → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED;
 * 3. `x-zm-request-timestamp` absent → HOOKINBOX_TIMESTAMP_MISSING; not canonical integer
 *    seconds → HOOKINBOX_TIMESTAMP_MALFORMED;
 * 4. every active secret; a digest that is not hex matches nothing; no match →
 *    HOOKINBOX_SIGNATURE_MISMATCH;
 * 5. then the window: HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE.
 * `handshake` answers `endpoint.url_validation` (see {@link zoomHandshake}).
 *
 * @example
 * ```ts
 * const scheme = zoomScheme();
 * scheme.verifier.verify(request, [{ index: 0, value: "zoom secret token" }], Date.now());
 * ```
 */
export function zoomScheme(options: ZoomOptions = {}): ProviderScheme {
  const toleranceMs = checkTolerance(options.toleranceMs ?? 300_000);
  return {
    provider: "zoom",
    identity: zoomIdentity,
    handshake: zoomHandshake,
    verifier: v0Verifier({ header: HEADER, timestampHeader: TIMESTAMP_HEADER, toleranceMs }),
  };
}

/**
 * A Zoom source (answers `endpoint.url_validation`). Returns `{ provider: "zoom", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { zoom: zoom({ secrets: [{ env: "ZOOM_SECRET" }] }) }
 * ```
 */
export const zoom = defineProvider({
  name: "zoom",
  options: signedWithTolerance,
  identity: zoomIdentity,
  docs: "#zoom",
  headers: { signature: ["x-zm-signature", "x-zm-request-timestamp"] },
  scheme: (_source, context) => zoomScheme(context.window),
});
