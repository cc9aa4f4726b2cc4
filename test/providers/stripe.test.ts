import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import { stripeIdentity, stripeScheme } from "../../src/providers/stripe.js";
import { describeSchemeContract } from "./contract.js";
import { expectRejected, flipChar, loadVectors, secrets, signedRequest } from "./helpers.js";

const stripe = new Stripe("sk_test_x");
const SECRET = "whsec_hookinbox_test_secret_0123456789";
const OTHER = "whsec_hookinbox_other_secret_9876543210";
const T = 1_700_000_000;
const NOW = T * 1000;
const TOLERANCE = 300_000;
const BODY =
  '{"id":"evt_1","object":"event","type":"invoice.paid","created":1700000000,"data":{"object":{"id":"in_1"}}}';

/** The oracle: the official package's test header generator. */
function sign(payload: string, secret = SECRET, timestamp = T): string {
  return stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}

const HEADER = sign(BODY);
const V1 = HEADER.slice(HEADER.indexOf("v1=") + 3);
const scheme = stripeScheme({ toleranceMs: TOLERANCE });

function verify(
  init: { body?: string; header?: string | null; active?: string[]; nowMs?: number } = {},
) {
  const header = init.header === undefined ? HEADER : init.header;
  const request = signedRequest(
    init.body ?? BODY,
    header === null ? {} : { "Stripe-Signature": header },
  );
  return scheme.verifier.verify(request, secrets(...(init.active ?? [SECRET])), init.nowMs ?? NOW);
}

describe("stripe: accepts what the official package signs", () => {
  it("has a well-formed oracle header", () => {
    expect(HEADER).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
  });

  it.each([
    ["a JSON event", BODY],
    ["an empty object", "{}"],
    ["unicode", '{"id":"evt_ü","name":"Zoë 🎉"}'],
    ["a large body", JSON.stringify({ id: "evt_big", data: "x".repeat(200_000) })],
  ])("%s", (_name, payload) => {
    const result = verify({ body: payload, header: sign(payload) });
    expect(result).toEqual({ secretIndex: 0, signedAt: NOW });
  });

  it("accepts a secret with unusual characters (the whole string is the key)", () => {
    const secret = "whsec_ÄÖÜ+/= spaced";
    expect(verify({ header: sign(BODY, secret), active: [secret] }).secretIndex).toBe(0);
  });

  it("accepts the published vectors", () => {
    const vectors = loadVectors().stripe;
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      const result = scheme.verifier.verify(
        signedRequest(v.body, { "stripe-signature": v.signature }),
        secrets(v.secret),
        v.timestamp * 1000,
      );
      expect(result).toEqual({ secretIndex: 0, signedAt: v.timestamp * 1000 });
      // and the oracle agrees with the vector
      expect(sign(v.body, v.secret, v.timestamp)).toBe(v.signature);
    }
  });
});

describe("stripe: accepted variants", () => {
  it.each<[string, { header?: string; nowMs?: number }]>([
    ["exactly at the tolerance in the past", { nowMs: NOW + TOLERANCE }],
    ["exactly at the tolerance in the future", { nowMs: NOW - TOLERANCE }],
    ["a v0 signature beside v1 (ignored)", { header: `t=${T},v0=${"0".repeat(64)},v1=${V1}` }],
    ["several v1, the second right", { header: `t=${T},v1=${"ab".repeat(32)},v1=${V1}` }],
    ["v1 before t", { header: `v1=${V1},t=${T}` }],
    ["spaces after commas", { header: `t=${T}, v1=${V1}` }],
    ["upper-case hex", { header: `t=${T},v1=${V1.toUpperCase()}` }],
    ["an unknown extra key", { header: `t=${T},v1=${V1},foo=bar` }],
    ["a truncated v1 beside a good one", { header: `t=${T},v1=${V1.slice(0, 10)},v1=${V1}` }],
  ])("%s", (_name, init) => {
    expect(verify(init)).toEqual({ secretIndex: 0, signedAt: NOW });
  });
});

describe("stripe: one defect, one code", () => {
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
      body: flipChar(BODY, 10),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "timestamp too old (tolerance + 1 s)",
      nowMs: NOW + TOLERANCE + 1000,
      code: "HOOKINBOX_TIMESTAMP_TOO_OLD",
      status: 400,
    },
    {
      name: "timestamp 1 ms past the tolerance",
      nowMs: NOW + TOLERANCE + 1,
      code: "HOOKINBOX_TIMESTAMP_TOO_OLD",
      status: 400,
    },
    {
      name: "timestamp too new (tolerance + 1 s)",
      nowMs: NOW - TOLERANCE - 1000,
      code: "HOOKINBOX_TIMESTAMP_IN_FUTURE",
      status: 400,
    },
    { name: "wrong secret", active: [OTHER], code: "HOOKINBOX_SIGNATURE_MISMATCH", status: 401 },
    {
      name: "missing signature header",
      header: null,
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "blank signature header",
      header: "  ",
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "malformed header: garbage",
      header: "garbage",
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "malformed header: key without =",
      header: `t=${T},v1`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "malformed header: empty item",
      header: `t=${T},,v1=${V1}`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "malformed header: empty key",
      header: `t=${T},=${V1}`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "malformed header: t twice",
      header: `t=${T},t=${T},v1=${V1}`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "malformed header: no signature at all",
      header: `t=${T}`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "truncated signature",
      header: `t=${T},v1=${V1.slice(0, 62)}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "signature with an odd length",
      header: `t=${T},v1=${V1.slice(0, 63)}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "signature with a non-hex character",
      header: `t=${T},v1=${V1.slice(0, 63)}g`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "empty signature",
      header: `t=${T},v1=`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "one signature hex digit changed",
      header: `t=${T},v1=${flipChar(V1, 0)}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "unknown version tag only (v0)",
      header: `t=${T},v0=${V1}`,
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "unknown version tag only (v2)",
      header: `t=${T},v2=${V1}`,
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "missing timestamp",
      header: `v1=${V1}`,
      code: "HOOKINBOX_TIMESTAMP_MISSING",
      status: 400,
    },
    {
      name: "malformed timestamp: letters",
      header: `t=17e8,v1=${V1}`,
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "malformed timestamp: negative",
      header: `t=-${T},v1=${V1}`,
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "malformed timestamp: fraction",
      header: `t=${T}.5,v1=${V1}`,
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "malformed timestamp: empty",
      header: `t=,v1=${V1}`,
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "malformed timestamp: leading zero",
      header: `t=0${T},v1=${V1}`,
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "malformed timestamp: too long",
      header: `t=${T}000000,v1=${V1}`,
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "timestamp changed (it is signed)",
      header: `t=${T + 1},v1=${V1}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "stale and forged: signature is checked before the window",
      header: `t=${T},v1=${flipChar(V1, 5)}`,
      nowMs: NOW + 10 * TOLERANCE,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, V1]);
  });
});

describe("stripe: options", () => {
  it("rejects a negative or NaN tolerance at creation", () => {
    expect(() => stripeScheme({ toleranceMs: -1 })).toThrow(/toleranceMs/);
    expect(() => stripeScheme({ toleranceMs: Number.NaN })).toThrow(/toleranceMs/);
  });

  it("Infinity disables the window", () => {
    const lenient = stripeScheme({ toleranceMs: Number.POSITIVE_INFINITY });
    const request = signedRequest(BODY, { "stripe-signature": HEADER });
    expect(lenient.verifier.verify(request, secrets(SECRET), 0).secretIndex).toBe(0);
  });

  it("skips an empty secret but still matches a good one", () => {
    expect(verify({ active: ["", SECRET] }).secretIndex).toBe(1);
  });
});

describe("stripe: identity preset", () => {
  it("reads the documented body fields", () => {
    expect(scheme.provider).toBe("stripe");
    expect(scheme.identity).toEqual({
      id: "$.id",
      type: "$.type",
      occurredAt: "$.created",
      orderingKey: "$.data.object.id",
      version: "$.created",
    });
    expect(scheme.identity).toBe(stripeIdentity);
    expect(Object.isFrozen(stripeIdentity)).toBe(true);
  });
});

describeSchemeContract({
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: NOW,
  sign: (body, secret) => ({ "stripe-signature": sign(body, secret) }),
});
