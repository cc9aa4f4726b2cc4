import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import { shopifyIdentity, shopifyOrderingKey, shopifyScheme } from "../../src/providers/shopify.ts";
import { describeSchemeContract } from "./contract.js";
import { expectRejected, flipChar, identityContext, secrets, signedRequest } from "./helpers.js";

// No official package can sign a Shopify webhook (@shopify/shopify-api only verifies), so the
// oracle follows Shopify's documented algorithm with node:crypto: base64 HMAC-SHA256 of the body.
const SECRET = "shpss_hookinbox_client_secret";
const OTHER = "shpss_hookinbox_other_secret";
const BODY =
  '{"id":820982911946154508,"admin_graphql_api_id":"gid://shopify/Order/820982911946154508","updated_at":"2024-01-01T12:00:00-05:00"}';
const NOW = 1_700_000_000_000;

function sign(body: string, secret = SECRET): string {
  return createHmac("sha256", secret).update(body).digest("base64");
}

const SIG = sign(BODY);
const scheme = shopifyScheme();

function verify(init: { body?: string; header?: string | null; active?: string[] } = {}) {
  const header = init.header === undefined ? SIG : init.header;
  const request = signedRequest(
    init.body ?? BODY,
    header === null ? {} : { "X-Shopify-Hmac-Sha256": header },
  );
  return scheme.verifier.verify(request, secrets(...(init.active ?? [SECRET])), NOW);
}

describe("shopify: accepts what Shopify's documented algorithm signs", () => {
  it.each([
    ["an order", BODY],
    ["unicode", '{"note":"Zoë 🎉"}'],
    ["an empty body", ""],
  ])("%s", (_name, payload) => {
    expect(verify({ body: payload, header: sign(payload) })).toEqual({ secretIndex: 0 });
  });

  it("has no timestamp: any clock is fine", () => {
    const request = signedRequest(BODY, { "x-shopify-hmac-sha256": SIG });
    expect(scheme.verifier.verify(request, secrets(SECRET), 0)).toEqual({ secretIndex: 0 });
  });

  it("accepts surrounding whitespace in the header", () => {
    expect(verify({ header: ` ${SIG} ` })).toEqual({ secretIndex: 0 });
  });
});

describe("shopify: one defect, one code", () => {
  const cases: {
    name: string;
    body?: string;
    header?: string | null;
    active?: string[];
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "one body byte changed",
      body: flipChar(BODY, 8),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "wrong secret", active: [OTHER], code: "HOOKINBOX_SIGNATURE_MISMATCH", status: 401 },
    { name: "missing header", header: null, code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    { name: "blank header", header: " ", code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    {
      name: "hex instead of base64",
      header: Buffer.from(SIG, "base64").toString("hex"),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "base64 without padding",
      header: SIG.replace(/=+$/, ""),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "truncated signature",
      header: SIG.slice(0, 40),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "one signature character changed",
      header: flipChar(SIG, 3),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "a sha256= prefix",
      header: `sha256=${SIG}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, SIG]);
  });
});

describe("shopify: identity preset", () => {
  it("reads the documented headers and body fields", () => {
    expect(scheme.provider).toBe("shopify");
    expect(scheme.identity).toBe(shopifyIdentity);
    expect(Object.isFrozen(shopifyIdentity)).toBe(true);
    expect(shopifyIdentity).toMatchObject({
      id: "header:x-shopify-webhook-id",
      type: "header:x-shopify-topic",
      occurredAt: "header:x-shopify-triggered-at",
      version: "$.updated_at",
    });
    expect(scheme.handshake).toBeUndefined();
    expect(scheme.split).toBeUndefined();
  });

  it.each([
    ["admin_graphql_api_id first", BODY, "gid://shopify/Order/820982911946154508"],
    ["else the numeric id", '{"id":42}', "42"],
    ["neither", '{"name":"x"}', undefined],
    ["a non-JSON body", "not json", undefined],
  ])("ordering key: %s", (_name, body, expected) => {
    expect(shopifyOrderingKey(identityContext({}, body))).toBe(expected);
  });
});

describeSchemeContract({
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: NOW,
  sign: (body, secret) => ({ "x-shopify-hmac-sha256": sign(body, secret) }),
});
