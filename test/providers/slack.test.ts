import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import {
  slackEventId,
  slackEventType,
  slackHandshake,
  slackIdentity,
  slackOrderingKey,
  slackScheme,
} from "../../src/providers/slack.ts";
import { describeSchemeContract } from "./contract.js";
import {
  answerHandshake,
  expectRejected,
  flipChar,
  type Headers,
  identityContext,
  loadVectors,
  secrets,
  signedRequest,
} from "./helpers.js";

// No official package signs Slack requests (@slack/bolt only verifies), so besides Slack's
// published vector the oracle follows the documented algorithm with node:crypto:
// "v0=" + hex HMAC-SHA256 of "v0:{timestamp}:{body}".
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const OTHER = "hookinbox-other-slack-secret";
const T = 1_700_000_000;
const NOW = T * 1000;
const TOLERANCE = 300_000;
const BODY =
  '{"token":"z26uFbvR1xHJEdHE1OQiO6t8","team_id":"T061EG9RZ","api_app_id":"A0FFV41KK","event":{"type":"app_mention","channel":"C0LAN2Q65","text":"hi","ts":"1515449522.000016"},"type":"event_callback","event_id":"Ev0LAN670R","event_time":1515449522}';

function sign(body: string, secret = SECRET, timestamp = T): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

const SIG = sign(BODY);
const HEX = SIG.slice(3);
const scheme = slackScheme({ toleranceMs: TOLERANCE });

function headers(signature: string | null, timestamp: string | null = String(T)): Headers {
  return {
    "X-Slack-Signature": signature ?? undefined,
    "X-Slack-Request-Timestamp": timestamp ?? undefined,
  };
}

function verify(
  init: {
    body?: string;
    signature?: string | null;
    timestamp?: string | null;
    active?: string[];
    nowMs?: number;
  } = {},
) {
  const request = signedRequest(
    init.body ?? BODY,
    headers(init.signature === undefined ? SIG : init.signature, init.timestamp),
  );
  return scheme.verifier.verify(request, secrets(...(init.active ?? [SECRET])), init.nowMs ?? NOW);
}

describe("slack: accepts what Slack signs", () => {
  it("accepts the published vector (a slash command, form-encoded)", () => {
    const vectors = loadVectors().slack;
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      const request = signedRequest(v.body, {
        "x-slack-signature": v.signature,
        "x-slack-request-timestamp": String(v.timestamp),
      });
      expect(scheme.verifier.verify(request, secrets(v.secret), v.timestamp * 1000)).toEqual({
        secretIndex: 0,
        signedAt: v.timestamp * 1000,
      });
      expect(sign(v.body, v.secret, v.timestamp)).toBe(v.signature); // the oracle agrees
    }
  });

  it.each([
    ["an Events API callback", BODY],
    ["an interactivity payload", `payload=${encodeURIComponent('{"type":"block_actions"}')}`],
    ["unicode", '{"event_id":"Ev1","text":"Zoë 🎉"}'],
  ])("%s", (_name, payload) => {
    expect(verify({ body: payload, signature: sign(payload) })).toEqual({
      secretIndex: 0,
      signedAt: NOW,
    });
  });

  it.each<[string, { signature?: string; nowMs?: number }]>([
    ["exactly at the tolerance in the past", { nowMs: NOW + TOLERANCE }],
    ["exactly at the tolerance in the future", { nowMs: NOW - TOLERANCE }],
    ["upper-case hex", { signature: `v0=${HEX.toUpperCase()}` }],
  ])("accepts %s", (_name, init) => {
    expect(verify(init)).toEqual({ secretIndex: 0, signedAt: NOW });
  });

  it("defaults to a 5 minute window", () => {
    const lenient = slackScheme();
    const request = signedRequest(BODY, headers(SIG));
    expect(lenient.verifier.verify(request, secrets(SECRET), NOW + 300_000).secretIndex).toBe(0);
    expectRejected(
      () => lenient.verifier.verify(request, secrets(SECRET), NOW + 300_001),
      "HOOKINBOX_TIMESTAMP_TOO_OLD",
      400,
    );
  });
});

describe("slack: one defect, one code", () => {
  const cases: {
    name: string;
    body?: string;
    signature?: string | null;
    timestamp?: string | null;
    active?: string[];
    nowMs?: number;
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "one body byte changed",
      body: flipChar(BODY, 12),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "wrong secret", active: [OTHER], code: "HOOKINBOX_SIGNATURE_MISMATCH", status: 401 },
    {
      name: "too old (tolerance + 1 ms)",
      nowMs: NOW + TOLERANCE + 1,
      code: "HOOKINBOX_TIMESTAMP_TOO_OLD",
      status: 400,
    },
    {
      name: "too new (tolerance + 1 ms)",
      nowMs: NOW - TOLERANCE - 1,
      code: "HOOKINBOX_TIMESTAMP_IN_FUTURE",
      status: 400,
    },
    {
      name: "missing signature",
      signature: null,
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    { name: "blank signature", signature: "  ", code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    {
      name: "signature without a version tag",
      signature: HEX,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "unknown version v1",
      signature: `v1=${HEX}`,
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "truncated signature",
      signature: SIG.slice(0, 60),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "non-hex signature",
      signature: `v0=${HEX.slice(0, 63)}z`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "one signature digit changed",
      signature: `v0=${flipChar(HEX, 0)}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "missing timestamp",
      timestamp: null,
      code: "HOOKINBOX_TIMESTAMP_MISSING",
      status: 400,
    },
    {
      name: "timestamp in ms",
      timestamp: String(NOW),
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "timestamp with letters",
      timestamp: "17e8",
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "timestamp changed (it is signed)",
      timestamp: String(T + 1),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "stale and forged: the signature is checked first",
      signature: `v0=${flipChar(HEX, 4)}`,
      nowMs: NOW + 10 * TOLERANCE,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, HEX]);
  });
});

describe("slack: url_verification handshake", () => {
  const challenge = "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P";
  const body = JSON.stringify({
    token: "Jhj5dZrVaK7ZwHHjRyZWjbDl",
    challenge,
    type: "url_verification",
  });

  it("echoes the challenge as text/plain for a verified request", () => {
    const request = signedRequest(body, headers(sign(body)));
    expect(answerHandshake(scheme, request, secrets(SECRET), NOW)).toEqual({
      status: 200,
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: challenge,
    });
  });

  it("rejects an unverified handshake with its signature code", () => {
    const request = signedRequest(body, headers(sign(body, OTHER)));
    expectRejected(
      () => answerHandshake(scheme, request, secrets(SECRET), NOW),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
  });

  it.each([
    ["an event callback", BODY],
    ["a slash command", "command=%2Fx&trigger_id=1.2.3"],
    ["a challenge that is not a string", '{"type":"url_verification","challenge":42}'],
    ["not JSON", 'type="url_verification"'],
  ])("is not a handshake: %s", (_name, payload) => {
    expect(slackHandshake(signedRequest(payload, {}))).toBeUndefined();
  });
});

describe("slack: identity preset", () => {
  const command = loadVectors().slack[0]?.body ?? "";
  const interactive = (payload: object) => `payload=${encodeURIComponent(JSON.stringify(payload))}`;

  it("is wired to the scheme", () => {
    expect(scheme.provider).toBe("slack");
    expect(scheme.identity).toBe(slackIdentity);
    expect(Object.isFrozen(slackIdentity)).toBe(true);
    expect(slackIdentity.occurredAt).toBe("$.event_time");
    expect(scheme.handshake).toBe(slackHandshake);
  });

  it.each<[string, string, string | undefined, string | undefined, string | undefined]>([
    ["an Events API callback", BODY, "Ev0LAN670R", "app_mention", "C0LAN2Q65"],
    [
      "a slash command: keyed on its trigger_id",
      command,
      "command:398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c",
      "slash_command",
      "G8PSS9T3V",
    ],
    [
      "an interactivity payload: keyed on its trigger_id",
      interactive({
        type: "block_actions",
        trigger_id: "13345224609.738474920.8088930838d88f008e0",
        channel: { id: "CBR2V3XEX" },
      }),
      "interactive:13345224609.738474920.8088930838d88f008e0",
      "block_actions",
      "CBR2V3XEX",
    ],
    [
      "view_closed (no trigger_id): view id and hash",
      interactive({ type: "view_closed", view: { id: "V1", hash: "156.abc" } }),
      "interactive:view_closed:V1:156.abc",
      "view_closed",
      undefined,
    ],
    [
      "an interaction without trigger_id: the first action_ts",
      interactive({ type: "block_suggestion", actions: [{ action_ts: "1548426417.840180" }] }),
      "interactive:block_suggestion:1548426417.840180",
      "block_suggestion",
      undefined,
    ],
    [
      "app_rate_limited",
      '{"type":"app_rate_limited","team_id":"T123456","minute_rate_limited":1518467820}',
      "app_rate_limited:T123456:1518467820",
      "app_rate_limited",
      undefined,
    ],
    ["a form without command or payload", "a=1&b=2", undefined, undefined, undefined],
    ["a payload that is not JSON", "payload=%7Bnope", undefined, undefined, undefined],
    [
      "JSON without event_id",
      '{"type":"event_callback","event":{}}',
      undefined,
      "event_callback",
      undefined,
    ],
  ])("%s", (_name, body, id, type, orderingKey) => {
    const context = identityContext({}, body);
    expect(slackEventId(context)).toBe(id);
    expect(slackEventType(context)).toBe(type);
    expect(slackOrderingKey(context)).toBe(orderingKey);
  });

  it("finds no id in a form body when the context carries no raw body", () => {
    const withoutBody = identityContext({}, command);
    expect(slackEventId({ headers: withoutBody.headers, json: withoutBody.json })).toBeUndefined();
  });
});

describeSchemeContract({
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: NOW,
  sign: (body, secret) => ({
    "x-slack-signature": sign(body, secret),
    "x-slack-request-timestamp": String(T),
  }),
});
