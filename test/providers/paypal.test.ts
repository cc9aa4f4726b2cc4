import { sign as rsaSign } from "node:crypto";
import zlib from "node:zlib";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import { crc32, paypalIdentity, paypalScheme } from "../../src/providers/paypal.ts";
import { type Headers, signedRequest } from "./helpers.js";
import { never, offlineFetcher, selfSignedCertificate } from "./key-fetcher.js";

// PayPal publishes no package that verifies offline (its SDKs call the verify-webhook-signature
// API), so these tests follow PayPal's documented algorithm: RSA SHA-256 over
// "transmission_id|transmission_time|webhook_id|crc32(body)" with the certificate at
// PAYPAL-CERT-URL, signed here with node:crypto and a self-signed certificate. CRC-32 is checked
// against its published check value and against Node's zlib.crc32.

const WEBHOOK_ID = "1JE4291016473214C";
const CERT_URL = "https://api.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77";
const TRANSMISSION_ID = "69cd13f0-d67a-11e5-baa3-778b53f4ae55";
const TIME = "2026-11-30T12:00:00Z";
// A documented event shape (PAYMENT.CAPTURE.COMPLETED).
const BODY = JSON.stringify({
  id: "WH-58D329510W468432D-8HN650336L201105X",
  create_time: "2026-11-30T11:59:58.000Z",
  resource_type: "capture",
  event_type: "PAYMENT.CAPTURE.COMPLETED",
  summary: "Payment completed for $ 7.47 USD",
  resource: {
    id: "42311647XV020574X",
    status: "COMPLETED",
    amount: { currency_code: "USD", value: "7.47" },
  },
  event_version: "1.0",
  resource_version: "2.0",
});

let certificate: { cert: string; privateKey: string };
let other: { cert: string; privateKey: string };
beforeAll(async () => {
  [certificate, other] = await Promise.all([
    selfSignedCertificate("messageverificationcerts.paypal.com"),
    selfSignedCertificate("messageverificationcerts.paypal.com"),
  ]);
});

function headers(
  body = BODY,
  init: { webhookId?: string; key?: string; time?: string; id?: string } = {},
): Record<string, string> {
  const id = init.id ?? TRANSMISSION_ID;
  const time = init.time ?? TIME;
  const signed = `${id}|${time}|${init.webhookId ?? WEBHOOK_ID}|${zlib.crc32(body) >>> 0}`;
  return {
    "paypal-transmission-id": id,
    "paypal-transmission-time": time,
    "paypal-transmission-sig": rsaSign(
      "sha256",
      Buffer.from(signed),
      init.key ?? certificate.privateKey,
    ).toString("base64"),
    "paypal-cert-url": CERT_URL,
    "paypal-auth-algo": "SHA256withRSA",
  };
}

function setup(
  answer: Parameters<typeof offlineFetcher>[0] = (r) =>
    r.url === CERT_URL ? { status: 200, body: certificate.cert } : { status: 404, body: "" },
  options: { timeoutMs?: number; toleranceMs?: number; webhookIds?: string[] } = {},
) {
  const offline = offlineFetcher(answer);
  const scheme = paypalScheme({
    webhookIds: options.webhookIds ?? [WEBHOOK_ID],
    ...(options.toleranceMs === undefined ? {} : { toleranceMs: options.toleranceMs }),
    keys: { fetcher: offline.fetcher, timeoutMs: options.timeoutMs ?? 2_000 },
  });
  const verify = (h: Headers, body = BODY, nowMs = Date.now()) =>
    scheme.verifier.verify(signedRequest(body, h), [], nowMs);
  return { ...offline, scheme, verify };
}

describe("paypal: CRC-32", () => {
  it("has the published check value", () => {
    expect(crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array())).toBe(0);
  });

  it("equals zlib's on arbitrary bytes (unsigned)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(crc32(bytes)).toBe(zlib.crc32(bytes) >>> 0);
      }),
      { numRuns: 500 },
    );
  });
});

describe("paypal: verifies as PayPal documents", () => {
  it("accepts a signed event and fetches the certificate once", async () => {
    const { verify, urls } = setup();
    expect(await verify(headers())).toEqual({ secretIndex: null });
    expect(await verify(headers())).toEqual({ secretIndex: null });
    expect(urls()).toEqual([CERT_URL]);
  });

  it("accepts any of several webhook ids (moving to a new webhook)", async () => {
    const { verify } = setup(undefined, { webhookIds: ["OLD0000000000000", WEBHOOK_ID] });
    expect(await verify(headers())).toEqual({ secretIndex: null });
  });

  it("verifies raw bytes: the same JSON re-serialised is rejected", async () => {
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2);
    await expect(setup().verify(headers(), pretty)).rejects.toMatchObject({
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
    });
  });

  it("with a window, checks the transmission time", async () => {
    const { verify } = setup(undefined, { toleranceMs: 300_000 });
    const at = Date.parse(TIME);
    expect(await verify(headers(), BODY, at + 300_000)).toEqual({
      secretIndex: null,
      signedAt: at,
    });
    await expect(verify(headers(), BODY, at + 300_001)).rejects.toMatchObject({
      code: "HOOKINBOX_TIMESTAMP_TOO_OLD",
    });
    await expect(verify(headers(BODY, { time: "yesterday" }), BODY, at)).rejects.toMatchObject({
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
    });
  });
});

describe("paypal: one code per defect", () => {
  const without = (name: string) => {
    const { [name]: _, ...rest } = headers();
    return rest;
  };
  it.each<[string, () => Headers, string, ErrorCode, number]>([
    [
      "no transmission signature",
      () => without("paypal-transmission-sig"),
      BODY,
      "HOOKINBOX_SIGNATURE_MISSING",
      400,
    ],
    [
      "no transmission id",
      () => without("paypal-transmission-id"),
      BODY,
      "HOOKINBOX_SIGNATURE_MISSING",
      400,
    ],
    [
      "no certificate URL",
      () => without("paypal-cert-url"),
      BODY,
      "HOOKINBOX_SIGNATURE_MISSING",
      400,
    ],
    [
      "no transmission time",
      () => without("paypal-transmission-time"),
      BODY,
      "HOOKINBOX_TIMESTAMP_MISSING",
      400,
    ],
    [
      "auth algo SHA1withRSA",
      () => ({ ...headers(), "paypal-auth-algo": "SHA1withRSA" }),
      BODY,
      "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      400,
    ],
    [
      "another webhook's id",
      () => headers(BODY, { webhookId: "9XX00000000000000" }),
      BODY,
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
    [
      "another key",
      () => headers(BODY, { key: other.privateKey }),
      BODY,
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
    [
      "a changed body",
      () => headers(),
      BODY.replace("7.47", "7.48"),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
    [
      "a changed transmission id",
      () => ({ ...headers(), "paypal-transmission-id": "x" }),
      BODY,
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
    [
      "a signature that is not base64",
      () => ({ ...headers(), "paypal-transmission-sig": "***" }),
      BODY,
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    ],
  ])("%s → %s", async (_name, build, body, code, status) => {
    await expect(setup().verify(build(), body)).rejects.toMatchObject({ code, status });
  });

  it.each([
    ["http", CERT_URL.replace("https:", "http:")],
    ["a look-alike host", "https://api.paypal.com.evil.example/v1/notifications/certs/CERT-1"],
    ["userinfo", "https://api.paypal.com@evil.example/v1/notifications/certs/CERT-1"],
    ["another path", "https://api.paypal.com/v1/oauth2/token"],
    ["the metadata address", "https://169.254.169.254/latest/meta-data/"],
  ])("a certificate URL with %s is refused without any network call", async (_name, url) => {
    const { verify, calls } = setup();
    await expect(verify({ ...headers(), "paypal-cert-url": url })).rejects.toMatchObject({
      code: "HOOKINBOX_KEY_URL_NOT_ALLOWED",
      status: 400,
    });
    expect(calls).toHaveLength(0);
  });

  it("accepts the sandbox and api-m hosts", async () => {
    for (const host of ["api.sandbox.paypal.com", "api-m.paypal.com", "api-m.sandbox.paypal.com"]) {
      const url = `https://${host}/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77`;
      const { verify, urls } = setup(() => ({ status: 200, body: certificate.cert }));
      expect(await verify({ ...headers(), "paypal-cert-url": url })).toEqual({ secretIndex: null });
      expect(urls()).toEqual([url]);
    }
  });

  it.each<[string, Parameters<typeof offlineFetcher>[0], ErrorCode, number]>([
    ["answers 502", () => ({ status: 502, body: "" }), "HOOKINBOX_KEY_UNAVAILABLE", 503],
    ["hangs", never, "HOOKINBOX_KEY_UNAVAILABLE", 503],
    ["has no such certificate", () => ({ status: 404, body: "" }), "HOOKINBOX_KEY_UNKNOWN", 401],
  ])("a certificate host that %s → %s", async (_name, answer, code, status) => {
    await expect(setup(answer, { timeoutMs: 50 }).verify(headers())).rejects.toMatchObject({
      code,
      status,
    });
  });
});

it("paypal: identity is the event id, type and resource", () => {
  expect(paypalIdentity).toEqual({
    id: "$.id",
    type: "$.event_type",
    occurredAt: "$.create_time",
    orderingKey: "$.resource.id",
  });
});
