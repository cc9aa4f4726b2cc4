/**
 * Slack: `X-Slack-Signature: v0=<hex>`, HMAC-SHA256 over `v0:{X-Slack-Request-Timestamp}:{raw body}`
 * keyed with the app's signing secret (UTF-8); the timestamp is integer seconds.
 *
 * Slack posts three kinds of bodies to a request URL, all signed the same way:
 * - Events API: JSON with `event_id` (stable across Slack's retries, which carry
 *   `X-Slack-Retry-Num`), plus the one-off `url_verification` handshake;
 * - slash commands: `application/x-www-form-urlencoded` fields (`command`, `trigger_id`, …);
 * - interactivity: a form with one field `payload` holding JSON (`type`, `trigger_id`, …).
 * Neither forms nor interactivity carry an event id, so a synthetic key is used (see
 * {@link slackEventId}). Slack does not retry slash commands or interactivity.
 */

import { signedWithTolerance } from "../config/source-fields.ts";
import {
  contextForm,
  field,
  jsonOrUndefined,
  parseJsonOrUndefined,
  path,
  scalarText,
} from "./body.ts";
import { asBuffer } from "./crypto.ts";
import { defineProvider } from "./definition.ts";
import { checkTolerance } from "./timestamps.ts";
import type {
  HandshakeResponse,
  IdentityContext,
  IdentitySpec,
  ProviderScheme,
  SignedRequest,
} from "./types.ts";
import { v0Verifier } from "./v0-signature.ts";

/**
 * Options of the Slack scheme.
 *
 * @example
 * ```ts
 * const options: SlackOptions = { toleranceMs: 300_000 };
 * ```
 */
export interface SlackOptions {
  /** How far the request timestamp may be from now, both ways, in ms. Default 300 000 (Slack's 5 min). */
  readonly toleranceMs?: number;
}

const HEADER = "x-slack-signature";
const TIMESTAMP_HEADER = "x-slack-request-timestamp";

/** The body as Slack sent it: JSON (Events API), an interactivity payload, or a slash command. */
type SlackBody =
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "interactive"; readonly value: unknown }
  | { readonly kind: "command"; readonly form: URLSearchParams }
  | { readonly kind: "unknown" };

function slackBody(context: IdentityContext): SlackBody {
  const json = jsonOrUndefined(context);
  if (json !== undefined) return { kind: "json", value: json };
  const form = contextForm(context);
  if (form === undefined) return { kind: "unknown" };
  const payload = form.get("payload");
  if (payload !== null) {
    try {
      return { kind: "interactive", value: JSON.parse(payload) };
    } catch {
      return { kind: "unknown" };
    }
  }
  return form.has("command") ? { kind: "command", form } : { kind: "unknown" };
}

/**
 * The Slack dedup key:
 * - Events API: `event_id` (`Ev…`), the id Slack documents as stable across retries;
 *   `app_rate_limited` notices (no `event_id`): `app_rate_limited:<team_id>:<minute_rate_limited>`;
 * - slash command: `command:<trigger_id>`. Slack mints one `trigger_id` per invocation, so it
 *   names exactly one command run;
 * - interactivity: `interactive:<trigger_id>`; payloads without one: `view_closed` →
 *   `interactive:view_closed:<view.id>:<view.hash>` (the hash changes with every view update),
 *   else `interactive:<type>:<actions[0].action_ts>`.
 * Anything else has no id (the event is rejected with HOOKINBOX_EVENT_ID_MISSING, never keyed
 * on a body hash). Form bodies need `context.body`.
 *
 * @example
 * ```ts
 * slackEventId(ctx); // "Ev08MFMKH6" | "command:398738663015.47445629121.803a0bc8…"
 * ```
 */
export function slackEventId(context: IdentityContext): string | undefined {
  const body = slackBody(context);
  switch (body.kind) {
    case "json": {
      const id = scalarText(field(body.value, "event_id"));
      if (id !== undefined) return id;
      if (field(body.value, "type") === "app_rate_limited") {
        const team = scalarText(field(body.value, "team_id"));
        const minute = scalarText(field(body.value, "minute_rate_limited"));
        if (team !== undefined && minute !== undefined) {
          return `app_rate_limited:${team}:${minute}`;
        }
      }
      return undefined;
    }
    case "command": {
      const trigger = body.form.get("trigger_id");
      return trigger === null || trigger === "" ? undefined : `command:${trigger}`;
    }
    case "interactive": {
      const trigger = scalarText(field(body.value, "trigger_id"));
      if (trigger !== undefined) return `interactive:${trigger}`;
      const type = scalarText(field(body.value, "type"));
      if (type === undefined) return undefined;
      if (type === "view_closed") {
        const view = scalarText(path(body.value, "view", "id"));
        const hash = scalarText(path(body.value, "view", "hash"));
        return view === undefined ? undefined : `interactive:view_closed:${view}:${hash ?? ""}`;
      }
      const actions = field(body.value, "actions");
      const actionTs = Array.isArray(actions)
        ? scalarText(field(actions[0], "action_ts"))
        : undefined;
      return actionTs === undefined ? undefined : `interactive:${type}:${actionTs}`;
    }
    default:
      return undefined;
  }
}

/**
 * The Slack event type: the inner `event.type` for Events API callbacks (`"app_mention"`),
 * else the body's `type` (`"url_verification"`, `"app_rate_limited"`); the payload's `type` for
 * interactivity (`"block_actions"`, `"view_submission"`, `"shortcut"`…); `"slash_command"` for
 * slash commands (the command itself is the body's `command` field).
 *
 * @example
 * ```ts
 * slackEventType(ctx); // "app_mention"
 * ```
 */
export function slackEventType(context: IdentityContext): string | undefined {
  const body = slackBody(context);
  switch (body.kind) {
    case "json":
      return scalarText(path(body.value, "event", "type")) ?? scalarText(field(body.value, "type"));
    case "interactive":
      return scalarText(field(body.value, "type"));
    case "command":
      return "slash_command";
    default:
      return undefined;
  }
}

/**
 * The Slack ordering key: the channel the event happened in (`event.channel`,
 * `event.item.channel`, the payload's `channel.id`, a command's `channel_id`), when there is one.
 *
 * @example
 * ```ts
 * slackOrderingKey(ctx); // "C0LAN2Q65"
 * ```
 */
export function slackOrderingKey(context: IdentityContext): string | undefined {
  const body = slackBody(context);
  switch (body.kind) {
    case "json":
      return (
        scalarText(path(body.value, "event", "channel")) ??
        scalarText(path(body.value, "event", "item", "channel"))
      );
    case "interactive":
      return scalarText(path(body.value, "channel", "id"));
    case "command":
      return body.form.get("channel_id") || undefined;
    default:
      return undefined;
  }
}

/**
 * Where a Slack event's identity lives: {@link slackEventId}, {@link slackEventType},
 * `event_time` (seconds) and the channel from {@link slackOrderingKey}.
 *
 * @example
 * ```ts
 * slackIdentity.occurredAt; // "$.event_time"
 * ```
 */
export const slackIdentity: IdentitySpec = Object.freeze({
  id: slackEventId,
  type: slackEventType,
  occurredAt: "$.event_time",
  orderingKey: slackOrderingKey,
});

const URL_VERIFICATION = Buffer.from('"url_verification"');

/**
 * Slack's `url_verification` handshake: a verified JSON body `{"type":"url_verification",
 * "challenge":"…"}` is answered `200 text/plain` with the challenge; anything else is not a
 * handshake (`undefined`).
 *
 * @example
 * ```ts
 * slackHandshake(request); // { status: 200, headers: { "content-type": "text/plain; charset=utf-8" }, body: "3eZbrw1a…" }
 * ```
 */
export function slackHandshake(request: SignedRequest): HandshakeResponse | undefined {
  if (!asBuffer(request.body).includes(URL_VERIFICATION)) return undefined;
  const body = parseJsonOrUndefined(request.body);
  if (field(body, "type") !== "url_verification") return undefined;
  const challenge = field(body, "challenge");
  if (typeof challenge !== "string") return undefined;
  return { status: 200, headers: { "content-type": "text/plain; charset=utf-8" }, body: challenge };
}

/**
 * The Slack scheme. Verification, in order:
 * 1. no active secret → HOOKINBOX_SOURCE_NO_ACTIVE_SECRET;
 * 2. `x-slack-signature` absent or blank → HOOKINBOX_SIGNATURE_MISSING; no `=` →
 *    HOOKINBOX_SIGNATURE_MALFORMED; a tag other than `v0` → HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED;
 * 3. `x-slack-request-timestamp` absent → HOOKINBOX_TIMESTAMP_MISSING; not canonical integer
 *    seconds → HOOKINBOX_TIMESTAMP_MALFORMED;
 * 4. every active secret; a digest that is not hex matches nothing; no match →
 *    HOOKINBOX_SIGNATURE_MISMATCH;
 * 5. then the window (default 5 min, both ways): HOOKINBOX_TIMESTAMP_TOO_OLD / _IN_FUTURE.
 * `handshake` answers `url_verification` (see {@link slackHandshake}).
 *
 * @example
 * ```ts
 * const scheme = slackScheme({ toleranceMs: 300_000 });
 * scheme.verifier.verify(request, [{ index: 0, value: "8f742231b10e8888abcd99yyyzzz85a5" }], Date.now());
 * ```
 */
export function slackScheme(options: SlackOptions = {}): ProviderScheme {
  const toleranceMs = checkTolerance(options.toleranceMs ?? 300_000);
  return {
    provider: "slack",
    identity: slackIdentity,
    handshake: slackHandshake,
    verifier: v0Verifier({ header: HEADER, timestampHeader: TIMESTAMP_HEADER, toleranceMs }),
  };
}

/**
 * A Slack source (`X-Slack-Signature`, answers `url_verification`). Returns `{ provider: "slack", …options }`;
 * the provider's definition (options, identity, scheme) rides along for the registry.
 *
 * @example
 * ```ts
 * sources: { slack: slack({ secrets: [{ env: "SLACK_SIGNING_SECRET" }] }) }
 * ```
 */
export const slack = defineProvider({
  name: "slack",
  options: signedWithTolerance,
  identity: slackIdentity,
  docs: "#slack",
  headers: { signature: ["x-slack-signature", "x-slack-request-timestamp"] },
  scheme: (_source, context) => slackScheme(context.window),
});
