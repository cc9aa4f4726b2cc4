import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import { paddleIdentity, paddleScheme } from "../../src/providers/paddle.ts";
import { describeSchemeContract } from "./contract.js";
import { expectRejected, flipChar, loadVectors, secrets, signedRequest } from "./helpers.js";

// @paddle/paddle-node-sdk only verifies, so besides Paddle's published vector the oracle
// follows the documented algorithm with node:crypto: h1 = hex HMAC-SHA256 of "{ts}:{body}".
const SECRET = "pdl_ntfset_01hookinbox_secret_key";
const OTHER = "pdl_ntfset_01hookinbox_other_key";
const T = 1_700_000_000;
const NOW = T * 1000;
const TOLERANCE = 5_000;
const BODY =
  '{"event_id":"evt_01h","event_type":"subscription.updated","occurred_at":"2023-11-14T22:13:20.000Z","notification_id":"ntf_01h","data":{"id":"sub_01h","updated_at":"2023-11-14T22:13:19.000Z"}}';

function h1(body: string, secret = SECRET, ts = T): string {
  return createHmac("sha256", secret).update(`${ts}:${body}`).digest("hex");
}

const H1 = h1(BODY);
const HEADER = `ts=${T};h1=${H1}`;
const scheme = paddleScheme({ toleranceMs: TOLERANCE });

function verify(
  init: { body?: string; header?: string | null; active?: string[]; nowMs?: number } = {},
) {
  const header = init.header === undefined ? HEADER : init.header;
  const request = signedRequest(
    init.body ?? BODY,
    header === null ? {} : { "Paddle-Signature": header },
  );
  return scheme.verifier.verify(request, secrets(...(init.active ?? [SECRET])), init.nowMs ?? NOW);
}

describe("paddle: accepts what Paddle signs", () => {
  it("accepts the published vector", () => {
    const vectors = loadVectors().paddle;
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      const request = signedRequest(v.body, { "paddle-signature": v.signature });
      expect(scheme.verifier.verify(request, secrets(v.secret), v.timestamp * 1000)).toEqual({
        secretIndex: 0,
        signedAt: v.timestamp * 1000,
      });
      expect(v.signature).toBe(`ts=${v.timestamp};h1=${h1(v.body, v.secret, v.timestamp)}`);
    }
  });

  it.each<[string, { header?: string; nowMs?: number }]>([
    ["a plain header", {}],
    ["exactly at the tolerance in the past", { nowMs: NOW + TOLERANCE }],
    ["exactly at the tolerance in the future", { nowMs: NOW - TOLERANCE }],
    [
      "two h1 during a rotation, the second right",
      { header: `ts=${T};h1=${"ab".repeat(32)};h1=${H1}` },
    ],
    ["h1 before ts", { header: `h1=${H1};ts=${T}` }],
    ["spaces around items", { header: `ts=${T}; h1=${H1}` }],
    ["an unknown extra key", { header: `ts=${T};h1=${H1};h2=zz` }],
  ])("%s", (_name, init) => {
    expect(verify(init)).toEqual({ secretIndex: 0, signedAt: NOW });
  });

  it("defaults to Paddle's 5 second window", () => {
    const s = paddleScheme();
    const request = signedRequest(BODY, { "paddle-signature": HEADER });
    expect(s.verifier.verify(request, secrets(SECRET), NOW + 5_000).secretIndex).toBe(0);
    expectRejected(
      () => s.verifier.verify(request, secrets(SECRET), NOW + 5_001),
      "HOOKINBOX_TIMESTAMP_TOO_OLD",
      400,
    );
  });
});

describe("paddle: one defect, one code", () => {
  const cases: {
    name: string;
    body?: string;
    header?: string | null;
    active?: string[];
    nowMs?: number;
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "one body byte changed",
      body: flipChar(BODY, 3),
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
    { name: "missing header", header: null, code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    { name: "blank header", header: " ", code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    {
      name: "comma-separated (Stripe style): no h1 item",
      header: `ts=${T},h1=${H1}`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "an item without =",
      header: `ts=${T};h1`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "an empty item",
      header: `ts=${T};;h1=${H1}`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "ts twice",
      header: `ts=${T};ts=${T};h1=${H1}`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "no signature at all",
      header: `ts=${T}`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "only an unknown version",
      header: `ts=${T};h2=${H1}`,
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    { name: "no ts", header: `h1=${H1}`, code: "HOOKINBOX_TIMESTAMP_MISSING", status: 400 },
    {
      name: "ts in ms",
      header: `ts=${NOW};h1=${H1}`,
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "ts changed (it is signed)",
      header: `ts=${T + 1};h1=${H1}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "truncated h1",
      header: `ts=${T};h1=${H1.slice(0, 62)}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "non-hex h1",
      header: `ts=${T};h1=${H1.slice(0, 63)}x`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "one h1 digit changed",
      header: `ts=${T};h1=${flipChar(H1, 9)}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, H1]);
  });
});

describe("paddle: identity preset", () => {
  it("reads the documented body fields", () => {
    expect(scheme.provider).toBe("paddle");
    expect(scheme.identity).toBe(paddleIdentity);
    expect(Object.isFrozen(paddleIdentity)).toBe(true);
    expect(paddleIdentity).toEqual({
      id: "$.event_id",
      type: "$.event_type",
      occurredAt: "$.occurred_at",
      orderingKey: "$.data.id",
      version: "$.data.updated_at",
    });
  });
});

describeSchemeContract({
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: NOW,
  sign: (body, secret) => ({ "paddle-signature": `ts=${T};h1=${h1(body, secret)}` }),
});
