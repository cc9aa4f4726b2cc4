import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readHeaders } from "../../src/ingest/headers.ts";
import { identify } from "../../src/ingest/identify.ts";
import { mollieScheme } from "../../src/providers/mollie.ts";
import { describeSchemeContract } from "./contract.js";
import { expectRejected, secrets, signedRequest } from "./helpers.js";

// No npm package serves as the oracle: next-gen webhooks are signed as Mollie's "Webhooks: best
// practices" page and its PHP SDK (SignatureValidator::createSignature) document — hex
// HMAC-SHA256 of the raw body with the webhook's signing secret, sent as
// `X-Mollie-Signature: sha256=<hex>` — and the signer below is node:crypto following that page.
// The next-gen payload is the documented `payment-link.paid` "simple" event; the classic one is
// the documented `id=tr_…` form post.

const SECRET = "Vt3sGNDxJEfB7dkaxh2p2Cyq6w8ZRWQ6";
const OTHER = "Sk2mZ8CbnsuQJp4yWr5LhTd9aEfG7vXy";

const EVENT = JSON.stringify({
  resource: "event",
  id: "event_GvJ8WHrp5isUdRub9CJyH",
  type: "payment-link.paid",
  entityId: "pl_qng5gbbv8NAZ5gpM5ZYgx",
  createdAt: "2024-12-16T15:59:04.0Z",
  _links: {
    self: {
      href: "https://api.mollie.com/v2/events/event_GvJ8WHrp5isUdRub9CJyH",
      type: "application/hal+json",
    },
    "payment-link": {
      href: "/v2/payment-links/pl_qng5gbbv8NAZ5gpM5ZYgx",
      type: "application/hal+json",
    },
  },
});

const sign = (body: string, secret = SECRET) =>
  createHmac("sha256", secret).update(body).digest("hex");

const scheme = mollieScheme();
const verify = (
  body: string,
  headers: Record<string, string>,
  url = "/webhooks/mollie",
  keys = [SECRET],
) => scheme.verifier.verify(signedRequest(body, headers, { url }), secrets(...keys), 0);

describe("mollie next-gen: X-Mollie-Signature over the raw body", () => {
  it("verifies the documented payment-link.paid event, with or without the sha256= prefix", () => {
    expect(verify(EVENT, { "x-mollie-signature": `sha256=${sign(EVENT)}` })).toEqual({
      secretIndex: 0,
    });
    expect(verify(EVENT, { "x-mollie-signature": sign(EVENT) }).secretIndex).toBe(0);
  });

  it("reads the event id, type, entity and creation time", () => {
    expect(identify(scheme.identity, readHeaders({}), Buffer.from(EVENT))).toEqual({
      dedupKey: "event_GvJ8WHrp5isUdRub9CJyH",
      type: "payment-link.paid",
      occurredAt: Date.parse("2024-12-16T15:59:04.0Z"),
      orderingKey: "pl_qng5gbbv8NAZ5gpM5ZYgx",
      version: null,
    });
  });

  it.each([0, 40, EVENT.length - 2])("one body byte changed (at %i) → MISMATCH", (at) => {
    const code = EVENT.charCodeAt(at);
    const changed = `${EVENT.slice(0, at)}${String.fromCharCode(code ^ 1)}${EVENT.slice(at + 1)}`;
    expectRejected(
      () => verify(changed, { "x-mollie-signature": `sha256=${sign(EVENT)}` }),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
  });

  it("one signature digit changed, or the wrong secret → MISMATCH", () => {
    const good = sign(EVENT);
    const bad = `${good.slice(0, -1)}${good.endsWith("0") ? "1" : "0"}`;
    expectRejected(
      () => verify(EVENT, { "x-mollie-signature": `sha256=${bad}` }),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
    expectRejected(
      () => verify(EVENT, { "x-mollie-signature": `sha256=${good}` }, undefined, [OTHER]),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
      [OTHER],
    );
  });

  it("a signature header wins over a token: a bad signature is not rescued by ?token=", () => {
    expectRejected(
      () => verify(EVENT, { "x-mollie-signature": "sha256=00" }, `/webhooks/m?token=${SECRET}`),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
  });
});

describe("mollie classic: id-only form posts, authenticated by ?token= in the webhookUrl", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const CLASSIC = "id=tr_WDqYK6vllg";
  const form = { "content-type": "application/x-www-form-urlencoded" };

  it("the token in the URL verifies; a wrong one is MISMATCH, none is MISSING", () => {
    expect(verify(CLASSIC, form, `/webhooks/mollie?token=${SECRET}`).secretIndex).toBe(0);
    expect(
      verify(CLASSIC, form, `/webhooks/mollie?token=${SECRET}`, [OTHER, SECRET]).secretIndex,
    ).toBe(1);
    expectRejected(
      () => verify(CLASSIC, form, `/webhooks/mollie?token=${OTHER}`),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
      [OTHER, SECRET],
    );
    expectRejected(() => verify(CLASSIC, form), "HOOKINBOX_SIGNATURE_MISSING", 400);
    expectRejected(
      () => verify(CLASSIC, form, "/webhooks/mollie?token="),
      "HOOKINBOX_SIGNATURE_MISSING",
      400,
    );
  });

  it("two notifications of one payment are two events on one ordering key (later state changes are not dropped)", () => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.UTC(2026, 11, 1, 0, 0, 0));
    const paid = identify(scheme.identity, readHeaders(form), Buffer.from(CLASSIC));
    vi.setSystemTime(Date.UTC(2026, 11, 8, 9, 30, 0));
    const refunded = identify(scheme.identity, readHeaders(form), Buffer.from(CLASSIC));
    expect(paid).toEqual({
      dedupKey: "tr_WDqYK6vllg@2026-12-01T00:00:00.000Z",
      type: "payment.changed",
      occurredAt: null,
      orderingKey: "tr_WDqYK6vllg",
      version: null,
    });
    expect(refunded.dedupKey).toBe("tr_WDqYK6vllg@2026-12-08T09:30:00.000Z");
    expect(refunded.orderingKey).toBe(paid.orderingKey);
  });

  it.each([
    ["ord_kEn1PlbGa", "order.changed"],
    ["sub_rVKGtNd6s3", "subscription.changed"],
    ["xyz_1", "resource.changed"],
  ])("the type names the resource of the id (%s → %s)", (id, type) => {
    expect(identify(scheme.identity, readHeaders(form), Buffer.from(`id=${id}`)).type).toBe(type);
  });

  it("a post with no id has no identity", () => {
    expect(() => identify(scheme.identity, readHeaders(form), Buffer.from("foo=bar"))).toThrow(
      expect.objectContaining({ code: "HOOKINBOX_EVENT_ID_MISSING" }),
    );
  });

  it("no active secret fails closed", () => {
    expectRejected(
      () => scheme.verifier.verify(signedRequest(CLASSIC, form), [], 0),
      "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
      503,
    );
  });
});

describeSchemeContract({
  label: "next-gen",
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: 0,
  body: EVENT,
  sign: (body, secret) => ({ "x-mollie-signature": `sha256=${sign(body, secret)}` }),
});
