import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { readHeaders } from "../../src/ingest/headers.ts";
import { identify } from "../../src/ingest/identify.ts";
import { mailgunScheme } from "../../src/providers/mailgun.ts";
import { describeSchemeContract } from "./contract.js";
import { expectRejected, secrets, signedRequest } from "./helpers.js";

// Mailgun publishes no signing package (mailgun.js only sends mail) and no complete vector: its
// "Securing Webhooks" page gives the algorithm — hex HMAC-SHA256 of timestamp + token with the
// HTTP webhook signing key — and the body's shape. The signer below follows that page with
// node:crypto, written apart from src/providers/mailgun.ts. The payload is the documented
// `delivered` event, trimmed.

const KEY = "key-7e55a8c3b2c4f1e0d9a8b7c6d5e4f3a2";
const OTHER = "key-0a1b2c3d4e5f60718293a4b5c6d7e8f9";
const T = 1_770_920_772;
const NOW = T * 1000;
const TOKEN = "e0b5477167110d68991efc6b9f89f0a11066af27834600e123";

function eventData(id = "CPgfbmQMTCKtHW6uIWtuVe", overrides: Record<string, unknown> = {}) {
  return {
    id,
    timestamp: 1770920771.984671,
    "log-level": "info",
    event: "delivered",
    "delivery-status": { code: 250, message: "OK", "attempt-no": 1 },
    envelope: {
      sender: "bob@sandbox.mailgun.org",
      transport: "smtp",
      targets: "alice@example.com",
    },
    message: {
      headers: {
        to: "Alice <alice@example.com>",
        "message-id": "20260212175212.1.D5E0E4C5A1B2C3D4@sandbox.mailgun.org",
        from: "Bob <bob@sandbox.mailgun.org>",
        subject: "Test delivered webhook",
      },
      size: 111,
    },
    recipient: "alice@example.com",
    ...overrides,
  };
}

function sign(key: string, timestamp = String(T), token = TOKEN) {
  return createHmac("sha256", key).update(`${timestamp}${token}`).digest("hex");
}

function body(
  options: {
    key?: string;
    token?: string;
    timestamp?: string;
    id?: string;
    parentKey?: string;
    signature?: Record<string, unknown>;
  } = {},
): string {
  const timestamp = options.timestamp ?? String(T);
  const token = options.token ?? TOKEN;
  return JSON.stringify({
    signature: options.signature ?? {
      token,
      timestamp,
      signature: sign(options.key ?? KEY, timestamp, token),
      ...(options.parentKey === undefined
        ? {}
        : { "parent-signature": sign(options.parentKey, timestamp, token) }),
    },
    "event-data": eventData(options.id),
  });
}

const verify = (text: string, keys = [KEY], now = NOW, scheme = mailgunScheme()) =>
  scheme.verifier.verify(
    signedRequest(text, { "content-type": "application/json" }),
    secrets(...keys),
    now,
  );

describe("mailgun: the documented delivered event", () => {
  it("verifies and reports the signed timestamp", () => {
    expect(verify(body())).toEqual({ secretIndex: 0, signedAt: NOW });
  });

  it("reads the identity from event-data", () => {
    const identity = identify(mailgunScheme().identity, readHeaders({}), Buffer.from(body()));
    expect(identity).toEqual({
      dedupKey: "CPgfbmQMTCKtHW6uIWtuVe",
      type: "delivered",
      occurredAt: 1770920771985,
      orderingKey: "20260212175212.1.D5E0E4C5A1B2C3D4@sandbox.mailgun.org",
      version: null,
    });
  });

  it("a subaccount's event verifies with the primary account's key (parent-signature)", () => {
    const text = body({ key: OTHER, parentKey: KEY });
    expect(verify(text, [KEY]).secretIndex).toBe(0);
    expect(verify(text, [OTHER]).secretIndex).toBe(0);
  });

  it("a rotated key list names the key that matched", () => {
    expect(verify(body(), [OTHER, KEY]).secretIndex).toBe(1);
  });
});

describe("mailgun: one mutation of a signed part is refused", () => {
  const sig = sign(KEY);
  const flip = (text: string, at: number) =>
    `${text.slice(0, at)}${text[at] === "0" ? "1" : "0"}${text.slice(at + 1)}`;

  it.each([0, 25, 49])("token character %i changed → MISMATCH", (at) => {
    const text = body({
      signature: { token: flip(TOKEN, at), timestamp: String(T), signature: sig },
    });
    expectRejected(() => verify(text), "HOOKINBOX_SIGNATURE_MISMATCH", 401, [KEY]);
  });

  it("timestamp one second later → MISMATCH", () => {
    const text = body({ signature: { token: TOKEN, timestamp: String(T + 1), signature: sig } });
    expectRejected(() => verify(text), "HOOKINBOX_SIGNATURE_MISMATCH", 401);
  });

  it.each([0, 31, 63])("signature hex digit %i changed → MISMATCH", (at) => {
    const text = body({
      signature: { token: TOKEN, timestamp: String(T), signature: flip(sig, at) },
    });
    expectRejected(() => verify(text), "HOOKINBOX_SIGNATURE_MISMATCH", 401);
  });

  it("the wrong key → MISMATCH", () => {
    expectRejected(() => verify(body(), [OTHER]), "HOOKINBOX_SIGNATURE_MISMATCH", 401, [OTHER]);
  });
});

describe("mailgun: malformed bodies", () => {
  it.each([
    ["a body that is not JSON", "token=abc&timestamp=1", "HOOKINBOX_SIGNATURE_MISSING", 400],
    [
      "no signature object",
      JSON.stringify({ "event-data": eventData() }),
      "HOOKINBOX_SIGNATURE_MISSING",
      400,
    ],
    [
      "signature is an array",
      JSON.stringify({ signature: [] }),
      "HOOKINBOX_SIGNATURE_MISSING",
      400,
    ],
    [
      "no timestamp",
      body({ signature: { token: TOKEN, signature: sign(KEY) } }),
      "HOOKINBOX_TIMESTAMP_MISSING",
      400,
    ],
    [
      "token not a string",
      body({ signature: { token: 5, timestamp: String(T), signature: sign(KEY) } }),
      "HOOKINBOX_SIGNATURE_MALFORMED",
      400,
    ],
    [
      "signature not a string",
      body({ signature: { token: TOKEN, timestamp: String(T), signature: null } }),
      "HOOKINBOX_SIGNATURE_MALFORMED",
      400,
    ],
    [
      "timestamp with a fraction",
      body({ timestamp: `${T}.5` }),
      "HOOKINBOX_TIMESTAMP_MALFORMED",
      400,
    ],
  ] as const)("%s → %s", (_name, text, code, status) => {
    expectRejected(() => verify(text), code, status);
  });

  it("a numeric timestamp is read as its decimal text", () => {
    const text = body({ signature: { token: TOKEN, timestamp: T, signature: sign(KEY) } });
    expect(verify(text).secretIndex).toBe(0);
  });

  it("no active key fails closed", () => {
    expectRejected(() => verify(body(), []), "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET", 503);
  });
});

describe("mailgun: timestamp window (default 5 min, per source)", () => {
  it("5 min old is accepted, 5 min and 1 s refused", () => {
    expect(verify(body(), [KEY], NOW + 300_000).secretIndex).toBe(0);
    expectRejected(() => verify(body(), [KEY], NOW + 301_000), "HOOKINBOX_TIMESTAMP_TOO_OLD", 400);
    expectRejected(
      () => verify(body(), [KEY], NOW - 301_000),
      "HOOKINBOX_TIMESTAMP_IN_FUTURE",
      400,
    );
  });

  it("a source's tolerance narrows it", () => {
    const scheme = mailgunScheme({ toleranceMs: 10_000 });
    expectRejected(
      () => verify(body(), [KEY], NOW + 11_000, scheme),
      "HOOKINBOX_TIMESTAMP_TOO_OLD",
      400,
    );
  });
});

describe("mailgun: the token is remembered, since the MAC does not cover event-data", () => {
  it("the same token and event id again (a redelivery) is accepted", () => {
    const scheme = mailgunScheme();
    expect(verify(body(), [KEY], NOW, scheme).secretIndex).toBe(0);
    expect(verify(body(), [KEY], NOW + 1000, scheme).secretIndex).toBe(0);
  });

  it("the same signature pasted onto another event → REPLAYED", () => {
    const scheme = mailgunScheme();
    verify(body(), [KEY], NOW, scheme);
    const error = expectRejected(
      () => verify(body({ id: "forged-event-id" }), [KEY], NOW, scheme),
      "HOOKINBOX_SIGNATURE_REPLAYED",
      401,
    );
    expect(error.message).not.toContain(TOKEN);
  });

  it("a token refused for its signature is not remembered", () => {
    const scheme = mailgunScheme();
    expectRejected(() => verify(body(), [OTHER], NOW, scheme), "HOOKINBOX_SIGNATURE_MISMATCH", 401);
    expect(verify(body({ id: "another" }), [KEY], NOW, scheme).secretIndex).toBe(0);
  });

  it("memory is bounded: past maxTokens the oldest token is forgotten", () => {
    const scheme = mailgunScheme({ maxTokens: 2 });
    const tokens = ["a".repeat(50), "b".repeat(50), "c".repeat(50)];
    for (const token of tokens)
      verify(body({ token, id: `first-${token[0]}` }), [KEY], NOW, scheme);
    // "a" was dropped to make room for "c"; "c" is still remembered.
    expect(verify(body({ token: tokens[0], id: "later" }), [KEY], NOW, scheme).secretIndex).toBe(0);
    expectRejected(
      () => verify(body({ token: tokens[2], id: "later" }), [KEY], NOW, scheme),
      "HOOKINBOX_SIGNATURE_REPLAYED",
      401,
    );
  });

  it("tokens older than twice the window are forgotten", () => {
    const scheme = mailgunScheme({ toleranceMs: 1000 });
    const later = String(T + 10);
    verify(body(), [KEY], NOW, scheme);
    verify(body({ token: "z".repeat(50), timestamp: later }), [KEY], (T + 10) * 1000, scheme);
    // TOKEN (signed at T) was dropped when "z…" (signed 10 s later) was remembered.
    const reused = body({ timestamp: later, id: "another" });
    expect(verify(reused, [KEY], (T + 10) * 1000, scheme).secretIndex).toBe(0);
  });
});

describeSchemeContract({
  scheme: mailgunScheme(),
  secret: KEY,
  otherSecret: OTHER,
  nowMs: NOW,
  signsBody: false,
  body: JSON.stringify({ "event-data": eventData() }),
  sign: () => ({ "content-type": "application/json" }),
  signedBody: (text, key) => {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return JSON.stringify({
      signature: { token: TOKEN, timestamp: String(T), signature: sign(key) },
      ...parsed,
    });
  },
});
