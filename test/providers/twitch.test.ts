import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import {
  parseRfc3339,
  twitchEventType,
  twitchHandshake,
  twitchIdentity,
  twitchScheme,
} from "../../src/providers/twitch.ts";
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

// No official package signs EventSub messages, so the oracle follows Twitch's documented
// algorithm with node:crypto: "sha256=" + hex HMAC-SHA256 of "{message-id}{message-timestamp}{body}".
const SECRET = "hookinbox-twitch-subscription-secret";
const OTHER = "hookinbox-twitch-other-secret";
const ID = "e76c6bd4-55c9-4987-8304-da1588d8988b";
const TS = "2023-11-14T22:13:20.123456789Z";
const NOW = 1_700_000_000_123;
const TOLERANCE = 600_000;
const BODY =
  '{"subscription":{"id":"f1c2a387-161a-49f9-a165-0f21d7a4e1c4","type":"channel.follow","version":"2"},"event":{"user_id":"1234","broadcaster_user_id":"1337"}}';

function sign(body: string, secret = SECRET, id = ID, ts = TS): string {
  return `sha256=${createHmac("sha256", secret)
    .update(id + ts + body)
    .digest("hex")}`;
}

const SIG = sign(BODY);
const HEX = SIG.slice(7);
const scheme = twitchScheme({ toleranceMs: TOLERANCE });

function headers(
  init: { signature?: string | null; id?: string | null; ts?: string | null; type?: string } = {},
): Headers {
  const pick = (v: string | null | undefined, d: string) => (v === null ? undefined : (v ?? d));
  return {
    "Twitch-Eventsub-Message-Signature": pick(init.signature, SIG),
    "Twitch-Eventsub-Message-Id": pick(init.id, ID),
    "Twitch-Eventsub-Message-Timestamp": pick(init.ts, TS),
    "Twitch-Eventsub-Message-Type": init.type ?? "notification",
    "Twitch-Eventsub-Subscription-Type": "channel.follow",
  };
}

function verify(
  init: {
    body?: string;
    signature?: string | null;
    id?: string | null;
    ts?: string | null;
    active?: string[];
    nowMs?: number;
  } = {},
) {
  const request = signedRequest(init.body ?? BODY, headers(init));
  return scheme.verifier.verify(request, secrets(...(init.active ?? [SECRET])), init.nowMs ?? NOW);
}

describe("twitch: accepts what Twitch's documented algorithm signs", () => {
  it.each<[string, { nowMs?: number; signature?: string }]>([
    ["a notification", {}],
    ["exactly 10 min old", { nowMs: NOW + TOLERANCE }],
    ["exactly 10 min ahead", { nowMs: NOW - TOLERANCE }],
    ["upper-case hex", { signature: `sha256=${HEX.toUpperCase()}` }],
  ])("%s", (_name, init) => {
    expect(verify(init)).toEqual({ secretIndex: 0, signedAt: NOW });
  });

  it.each<[string, number]>([
    ["2023-11-14T22:13:20Z", 1_700_000_000_000],
    ["2023-11-14T22:13:20.5Z", 1_700_000_000_500],
    ["2023-11-14T22:13:20.123456789Z", 1_700_000_000_123],
    ["2023-11-14t22:13:20z", 1_700_000_000_000],
    ["2023-11-15T00:13:20+02:00", 1_700_000_000_000],
    ["2023-11-14T17:13:20-05:00", 1_700_000_000_000],
  ])("parses RFC 3339 %s", (value, ms) => {
    expect(parseRfc3339(value)).toBe(ms);
  });

  it.each([
    "2023-11-14 22:13:20Z",
    "2023-11-14T22:13:20",
    "2023-02-30T00:00:00Z",
    "2023-13-01T00:00:00Z",
    "2023-11-14T24:00:00Z",
    "2023-11-14T22:13:60Z",
    "2023-11-14T22:13:20.1234567890Z",
    "2023-11-14T22:13:20+24:00",
    "1700000000",
    "",
  ])("rejects %j as malformed", (value) => {
    expectRejected(() => parseRfc3339(value), "HOOKINBOX_TIMESTAMP_MALFORMED", 400);
  });
});

describe("twitch: one defect, one code", () => {
  const cases: {
    name: string;
    body?: string;
    signature?: string | null;
    id?: string | null;
    ts?: string | null;
    active?: string[];
    nowMs?: number;
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "one body byte changed",
      body: flipChar(BODY, 6),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "wrong secret", active: [OTHER], code: "HOOKINBOX_SIGNATURE_MISMATCH", status: 401 },
    {
      name: "message id changed (it is signed)",
      id: "other-id",
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "message id missing", id: null, code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    {
      name: "timestamp changed (it is signed)",
      ts: "2023-11-14T22:13:20.123Z",
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "timestamp missing", ts: null, code: "HOOKINBOX_TIMESTAMP_MISSING", status: 400 },
    {
      name: "timestamp in epoch seconds",
      ts: "1700000000",
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "too old (10 min + 1 ms)",
      nowMs: NOW + TOLERANCE + 1,
      code: "HOOKINBOX_TIMESTAMP_TOO_OLD",
      status: 400,
    },
    {
      name: "too new (10 min + 1 ms)",
      nowMs: NOW - TOLERANCE - 1,
      code: "HOOKINBOX_TIMESTAMP_IN_FUTURE",
      status: 400,
    },
    {
      name: "signature missing",
      signature: null,
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "signature without prefix",
      signature: HEX,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "sha1 prefix",
      signature: `sha1=${HEX}`,
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "truncated",
      signature: SIG.slice(0, 50),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, HEX]);
  });
});

describe("twitch: webhook_callback_verification handshake", () => {
  const challenge = "pogchamp-kappa-360noscope-vohiyo";
  const body = JSON.stringify({ challenge, subscription: { id: "f1c2", type: "channel.follow" } });

  it("echoes the challenge verbatim as text/plain", () => {
    const request = signedRequest(
      body,
      headers({ signature: sign(body), type: "webhook_callback_verification" }),
    );
    expect(answerHandshake(scheme, request, secrets(SECRET), NOW)).toEqual({
      status: 200,
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: challenge,
    });
  });

  it("rejects an unverified handshake with its signature code", () => {
    const request = signedRequest(
      body,
      headers({ signature: sign(body, OTHER), type: "webhook_callback_verification" }),
    );
    expectRejected(
      () => answerHandshake(scheme, request, secrets(SECRET), NOW),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
  });

  it("is not a handshake for notifications or without a string challenge", () => {
    expect(twitchHandshake(signedRequest(body, headers()))).toBeUndefined();
    expect(
      twitchHandshake(signedRequest("{}", headers({ type: "webhook_callback_verification" }))),
    ).toBeUndefined();
  });
});

describe("twitch: identity preset", () => {
  it("is wired to the scheme", () => {
    expect(scheme.provider).toBe("twitch");
    expect(scheme.identity).toBe(twitchIdentity);
    expect(Object.isFrozen(twitchIdentity)).toBe(true);
    expect(twitchIdentity).toMatchObject({
      id: "header:twitch-eventsub-message-id",
      occurredAt: "header:twitch-eventsub-message-timestamp",
      orderingKey: "$.subscription.id",
    });
  });

  it.each<[string, string | undefined, string | undefined]>([
    ["notification", "notification", "channel.follow"],
    ["revocation", "revocation", "revocation.channel.follow"],
    ["no message type header", undefined, "channel.follow"],
  ])("type of a %s", (_name, messageType, type) => {
    const context = identityContext({
      "twitch-eventsub-message-type": messageType,
      "twitch-eventsub-subscription-type": "channel.follow",
    });
    expect(twitchEventType(context)).toBe(type);
  });
});

describeSchemeContract({
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: NOW,
  sign: (body, secret) => ({
    "twitch-eventsub-message-signature": sign(body, secret),
    "twitch-eventsub-message-id": ID,
    "twitch-eventsub-message-timestamp": TS,
  }),
});
