import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import { squareIdentity, squareScheme } from "../../src/providers/square.ts";
import { describeSchemeContract } from "./contract.js";
import { expectRejected, flipChar, loadVectors, secrets, signedRequest } from "./helpers.js";

// The `square` SDK only verifies, so besides Square's published vector the oracle follows the
// documented algorithm with node:crypto: base64 HMAC-SHA256 of "{notification URL}{body}".
const KEY = "hookinbox-square-signature-key";
const OTHER = "hookinbox-square-other-key";
const URL_ = "https://hooks.example.com/webhooks/square";
const BODY =
  '{"merchant_id":"6SSW7HV8K2ST5","type":"payment.updated","event_id":"13b867cf-db3d-4b1c-90b6-2f32a9d78124","created_at":"2023-11-14T22:13:20Z","data":{"type":"payment","id":"KkAkhdMsgzn59SM8A89WgKwekxLZY"}}';

function sign(body: string, key = KEY, url = URL_): string {
  return createHmac("sha256", key)
    .update(url + body)
    .digest("base64");
}

const SIG = sign(BODY);
const scheme = squareScheme({ notificationUrl: URL_ });

function verify(
  init: { body?: string; header?: string | null; active?: string[]; notificationUrl?: string } = {},
) {
  const header = init.header === undefined ? SIG : init.header;
  const request = signedRequest(
    init.body ?? BODY,
    header === null ? {} : { "X-Square-HmacSha256-Signature": header },
  );
  const s =
    init.notificationUrl === undefined
      ? scheme
      : squareScheme({ notificationUrl: init.notificationUrl });
  return s.verifier.verify(request, secrets(...(init.active ?? [KEY])), 0);
}

describe("square: accepts what Square signs", () => {
  it("accepts the published vector", () => {
    const vectors = loadVectors().square;
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      const s = squareScheme({ notificationUrl: v.notificationUrl });
      const request = signedRequest(v.body, { "x-square-hmacsha256-signature": v.signature });
      expect(s.verifier.verify(request, secrets(v.signatureKey), 0)).toEqual({ secretIndex: 0 });
      expect(sign(v.body, v.signatureKey, v.notificationUrl)).toBe(v.signature);
    }
  });

  it.each([
    ["an event", BODY],
    ["unicode", '{"note":"Zoë 🎉"}'],
  ])("%s", (_name, payload) => {
    expect(verify({ body: payload, header: sign(payload) })).toEqual({ secretIndex: 0 });
  });

  it("signs the configured URL verbatim (a trailing slash or query is part of it)", () => {
    const url = "https://hooks.example.com/webhooks/square/?tenant=a";
    expect(verify({ notificationUrl: url, header: sign(BODY, KEY, url) }).secretIndex).toBe(0);
  });
});

describe("square: one defect, one code", () => {
  const cases: {
    name: string;
    body?: string;
    header?: string | null;
    active?: string[];
    notificationUrl?: string;
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "one body byte changed",
      body: flipChar(BODY, 4),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "wrong key", active: [OTHER], code: "HOOKINBOX_SIGNATURE_MISMATCH", status: 401 },
    {
      name: "another notification URL",
      notificationUrl: `${URL_}/`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "missing header", header: null, code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    { name: "blank header", header: "\t", code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    {
      name: "body-only signature (URL left out)",
      header: createHmac("sha256", KEY).update(BODY).digest("base64"),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "truncated",
      header: SIG.slice(0, 43),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "one character changed",
      header: flipChar(SIG, 1),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [KEY, OTHER, SIG]);
  });

  it("rejects a notificationUrl that is not an absolute http(s) URL at creation", () => {
    expect(() => squareScheme({ notificationUrl: "/webhooks/square" })).toThrow(/notificationUrl/);
  });
});

describe("square: identity preset", () => {
  it("reads the documented body fields", () => {
    expect(scheme.provider).toBe("square");
    expect(scheme.identity).toBe(squareIdentity);
    expect(Object.isFrozen(squareIdentity)).toBe(true);
    expect(squareIdentity).toEqual({
      id: "$.event_id",
      type: "$.type",
      occurredAt: "$.created_at",
      orderingKey: "$.data.id",
    });
  });
});

describeSchemeContract({
  scheme,
  secret: KEY,
  otherSecret: OTHER,
  nowMs: 0,
  sign: (body, key) => ({ "x-square-hmacsha256-signature": sign(body, key) }),
});
