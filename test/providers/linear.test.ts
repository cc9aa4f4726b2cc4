import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import { linearEventType, linearIdentity, linearScheme } from "../../src/providers/linear.ts";
import { describeSchemeContract } from "./contract.js";
import { expectRejected, flipChar, identityContext, secrets, signedRequest } from "./helpers.js";

// @linear/sdk only verifies, so the oracle follows Linear's documented algorithm with
// node:crypto: hex HMAC-SHA256 of the raw body; the body's webhookTimestamp (ms) is the time.
const SECRET = "lin_wh_hookinbox_secret";
const OTHER = "lin_wh_hookinbox_other";
const NOW = 1_700_000_000_123;
const TOLERANCE = 60_000;
const body = (timestamp: unknown = NOW) =>
  `{"action":"update","type":"Issue","createdAt":"2023-11-14T22:13:20.000Z","data":{"id":"9b1f","updatedAt":"2023-11-14T22:13:19.000Z"},"webhookTimestamp":${JSON.stringify(timestamp)}}`;
const BODY = body();

function sign(payload: string, secret = SECRET): string {
  return createHmac("sha256", secret).update(payload).digest("hex");
}

const SIG = sign(BODY);
const scheme = linearScheme({ toleranceMs: TOLERANCE });

function verify(
  init: { body?: string; header?: string | null; active?: string[]; nowMs?: number } = {},
) {
  const payload = init.body ?? BODY;
  const header = init.header === undefined ? sign(payload) : init.header;
  const request = signedRequest(payload, header === null ? {} : { "Linear-Signature": header });
  return scheme.verifier.verify(request, secrets(...(init.active ?? [SECRET])), init.nowMs ?? NOW);
}

describe("linear: accepts what Linear's documented algorithm signs", () => {
  it.each<[string, { body?: string; nowMs?: number; header?: string }, number]>([
    ["a plain request", {}, NOW],
    ["exactly 60 s old", { nowMs: NOW + TOLERANCE }, NOW],
    ["exactly 60 s ahead", { nowMs: NOW - TOLERANCE }, NOW],
    ["webhookTimestamp as a digit string", { body: body(String(NOW)) }, NOW],
    ["upper-case hex", { header: SIG.toUpperCase() }, NOW],
  ])("%s", (_name, init, signedAt) => {
    expect(verify(init)).toEqual({ secretIndex: 0, signedAt });
  });

  it("defaults to Linear's 60 s window", () => {
    const s = linearScheme();
    const request = signedRequest(BODY, { "linear-signature": SIG });
    expect(s.verifier.verify(request, secrets(SECRET), NOW + 60_000).secretIndex).toBe(0);
    expectRejected(
      () => s.verifier.verify(request, secrets(SECRET), NOW + 60_001),
      "HOOKINBOX_TIMESTAMP_TOO_OLD",
      400,
    );
  });
});

describe("linear: one defect, one code", () => {
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
      body: BODY,
      header: sign(flipChar(BODY, 3)),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "webhookTimestamp changed (it is signed)",
      body: body(NOW + 1),
      header: SIG,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "wrong secret", active: [OTHER], code: "HOOKINBOX_SIGNATURE_MISMATCH", status: 401 },
    { name: "missing header", header: null, code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    {
      name: "sha256= prefix",
      header: `sha256=${SIG}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "truncated",
      header: SIG.slice(0, 62),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
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
      name: "no webhookTimestamp",
      body: '{"type":"Issue"}',
      code: "HOOKINBOX_TIMESTAMP_MISSING",
      status: 400,
    },
    {
      name: "webhookTimestamp null",
      body: body(null),
      code: "HOOKINBOX_TIMESTAMP_MISSING",
      status: 400,
    },
    {
      name: "webhookTimestamp in seconds looks 1970",
      body: body(1_700_000_000),
      code: "HOOKINBOX_TIMESTAMP_TOO_OLD",
      status: 400,
    },
    {
      name: "webhookTimestamp fractional",
      body: body(NOW + 0.5),
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "webhookTimestamp negative",
      body: body(-1),
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "webhookTimestamp an ISO string",
      body: body("2023-11-14T22:13:20Z"),
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "webhookTimestamp an object",
      body: body({ ms: NOW }),
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "signed body that is not JSON",
      body: "not json",
      code: "HOOKINBOX_BODY_INVALID_JSON",
      status: 400,
    },
    { name: "signed JSON array", body: "[1]", code: "HOOKINBOX_TIMESTAMP_MISSING", status: 400 },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, SIG]);
  });
});

describe("linear: identity preset", () => {
  it("is wired to the scheme", () => {
    expect(scheme.provider).toBe("linear");
    expect(scheme.identity).toBe(linearIdentity);
    expect(Object.isFrozen(linearIdentity)).toBe(true);
    expect(linearIdentity).toMatchObject({
      id: "header:linear-delivery",
      occurredAt: "$.createdAt",
      orderingKey: "$.data.id",
      version: "$.data.updatedAt",
    });
  });

  it.each<[string, string, string | undefined]>([
    ["type.action", BODY, "Issue.update"],
    ["type alone", '{"type":"Issue"}', "Issue"],
    ["no type", '{"action":"create"}', undefined],
    ["not JSON", "x", undefined],
  ])("event type: %s", (_name, payload, type) => {
    expect(linearEventType(identityContext({}, payload))).toBe(type);
  });
});

describeSchemeContract({
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: NOW,
  body: BODY,
  sign: (payload, secret) => ({ "linear-signature": sign(payload, secret) }),
});
