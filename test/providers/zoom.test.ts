import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import { zoomEventKey, zoomHandshake, zoomIdentity, zoomScheme } from "../../src/providers/zoom.ts";
import { describeSchemeContract } from "./contract.js";
import {
  answerHandshake,
  expectRejected,
  flipChar,
  type Headers,
  identityContext,
  secrets,
  signedRequest,
} from "./helpers.js";

// No official Zoom package signs webhooks, so the oracle follows Zoom's documented algorithm
// with node:crypto: "v0=" + hex HMAC-SHA256 of "v0:{x-zm-request-timestamp}:{body}".
const SECRET = "hookinbox_zoom_secret_token";
const OTHER = "hookinbox_zoom_other_token";
const T = 1_700_000_000;
const NOW = T * 1000;
const TOLERANCE = 300_000;
const BODY =
  '{"event":"meeting.started","event_ts":1700000000123,"payload":{"account_id":"AAAAAABBBB","object":{"id":"85746065","uuid":"4444AAAiAAAAAiAiAiiAii==","topic":"Standup"}}}';

function sign(body: string, secret = SECRET, ts = T): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${ts}:${body}`).digest("hex")}`;
}

const SIG = sign(BODY);
const HEX = SIG.slice(3);
const scheme = zoomScheme({ toleranceMs: TOLERANCE });

function headers(signature: string | null = SIG, timestamp: string | null = String(T)): Headers {
  return {
    "x-zm-signature": signature ?? undefined,
    "x-zm-request-timestamp": timestamp ?? undefined,
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

describe("zoom: accepts what Zoom's documented algorithm signs", () => {
  it.each<[string, { nowMs?: number; signature?: string }]>([
    ["a plain request", {}],
    ["exactly at the tolerance in the past", { nowMs: NOW + TOLERANCE }],
    ["exactly at the tolerance in the future", { nowMs: NOW - TOLERANCE }],
    ["upper-case hex", { signature: `v0=${HEX.toUpperCase()}` }],
  ])("%s", (_name, init) => {
    expect(verify(init)).toEqual({ secretIndex: 0, signedAt: NOW });
  });

  it("Infinity disables the window", () => {
    const s = zoomScheme({ toleranceMs: Number.POSITIVE_INFINITY });
    expect(s.verifier.verify(signedRequest(BODY, headers()), secrets(SECRET), 0).secretIndex).toBe(
      0,
    );
  });
});

describe("zoom: one defect, one code", () => {
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
      body: flipChar(BODY, 4),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "wrong secret", active: [OTHER], code: "HOOKINBOX_SIGNATURE_MISMATCH", status: 401 },
    {
      name: "too old",
      nowMs: NOW + TOLERANCE + 1,
      code: "HOOKINBOX_TIMESTAMP_TOO_OLD",
      status: 400,
    },
    {
      name: "too new",
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
    {
      name: "signature without tag",
      signature: HEX,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "unknown tag",
      signature: `v1=${HEX}`,
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "truncated",
      signature: SIG.slice(0, 40),
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
      name: "malformed timestamp",
      timestamp: "1.7e9",
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "timestamp changed (it is signed)",
      timestamp: String(T - 1),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, HEX]);
  });
});

describe("zoom: endpoint.url_validation handshake", () => {
  const plainToken = "qgg8vlvZRS6UYooatFL8Aw";
  const body = JSON.stringify({
    payload: { plainToken },
    event_ts: 1654503849680,
    event: "endpoint.url_validation",
  });

  it("answers {plainToken, encryptedToken} with the secret that verified the request", () => {
    const request = signedRequest(body, headers(sign(body, OTHER)));
    const answer = answerHandshake(scheme, request, secrets(SECRET, OTHER), NOW);
    expect(answer).toEqual({
      status: 200,
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({
        plainToken,
        encryptedToken: createHmac("sha256", OTHER).update(plainToken).digest("hex"),
      }),
    });
  });

  it("rejects an unverified handshake with its signature code", () => {
    const request = signedRequest(body, headers(sign(body, OTHER)));
    expectRejected(
      () => answerHandshake(scheme, request, secrets(SECRET), NOW),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
    const unsigned = signedRequest(body, {});
    expectRejected(
      () => answerHandshake(scheme, unsigned, secrets(SECRET), NOW),
      "HOOKINBOX_SIGNATURE_MISSING",
      400,
    );
  });

  it.each([
    ["an ordinary event", BODY],
    ["no plainToken", '{"event":"endpoint.url_validation","payload":{}}'],
    ["not JSON", '"endpoint.url_validation"x'],
  ])("is not a handshake: %s", (_name, payload) => {
    expect(
      zoomHandshake(signedRequest(payload, {}), { secretIndex: 0 }, { index: 0, value: SECRET }),
    ).toBeUndefined();
  });
});

describe("zoom: identity preset", () => {
  it("is wired to the scheme", () => {
    expect(scheme.provider).toBe("zoom");
    expect(scheme.identity).toBe(zoomIdentity);
    expect(Object.isFrozen(zoomIdentity)).toBe(true);
    expect(zoomIdentity).toMatchObject({
      type: "$.event",
      occurredAt: "$.event_ts",
      orderingKey: "$.payload.object.id",
    });
  });

  it.each<[string, object, string | undefined]>([
    ["event, event_ts and object id", JSON.parse(BODY), "meeting.started:1700000000123:85746065"],
    [
      "object uuid when there is no id",
      { event: "recording.completed", event_ts: 5, payload: { object: { uuid: "u==" } } },
      "recording.completed:5:u==",
    ],
    ["no object", { event: "app.deauthorized", event_ts: 5, payload: {} }, "app.deauthorized:5:"],
    ["no event_ts", { event: "meeting.started", payload: { object: { id: 1 } } }, undefined],
    ["no event", { event_ts: 5 }, undefined],
  ])("synthetic key: %s", (_name, body, key) => {
    expect(zoomEventKey(identityContext({}, JSON.stringify(body)))).toBe(key);
  });
});

describeSchemeContract({
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: NOW,
  sign: (body, secret) => ({
    "x-zm-signature": sign(body, secret),
    "x-zm-request-timestamp": String(T),
  }),
});
