import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import {
  mercadoPagoIdentity,
  mercadoPagoManifest,
  mercadoPagoScheme,
} from "../../src/providers/mercadopago.ts";
import { describeSchemeContract } from "./contract.js";
import { expectRejected, flipChar, type Headers, secrets, signedRequest } from "./helpers.js";

// No official package signs Mercado Pago notifications, so the oracle follows the documented
// algorithm with node:crypto: v1 = hex HMAC-SHA256 of "id:{data.id};request-id:{x-request-id};ts:{ts};".
const SECRET = "hookinbox-mercadopago-secret";
const OTHER = "hookinbox-mercadopago-other";
const TS = "1704908010";
const NOW = 1_704_908_010_000;
const REQUEST_ID = "bb56a2f1-6aae-46ac-982e-9dcd3581d08e";
const URL_ = "/webhooks/mp?data.id=ABC123&type=payment";
const BODY =
  '{"action":"payment.updated","api_version":"v1","data":{"id":"ABC123"},"date_created":"2024-01-10T14:53:30Z","id":123456,"live_mode":false,"type":"payment","user_id":44}';

function v1(manifest: string, secret = SECRET): string {
  return createHmac("sha256", secret).update(manifest).digest("hex");
}

const V1 = v1(`id:abc123;request-id:${REQUEST_ID};ts:${TS};`);
const scheme = mercadoPagoScheme();

function verify(
  init: {
    url?: string;
    signature?: string | null;
    requestId?: string | null;
    active?: string[];
    nowMs?: number;
    toleranceMs?: number;
  } = {},
) {
  const headers: Headers = {
    "x-signature": init.signature === null ? undefined : (init.signature ?? `ts=${TS},v1=${V1}`),
    "x-request-id": init.requestId === null ? undefined : (init.requestId ?? REQUEST_ID),
  };
  const request = signedRequest(BODY, headers, { url: init.url ?? URL_ });
  const s =
    init.toleranceMs === undefined ? scheme : mercadoPagoScheme({ toleranceMs: init.toleranceMs });
  return s.verifier.verify(request, secrets(...(init.active ?? [SECRET])), init.nowMs ?? NOW);
}

describe("mercadopago: accepts what the documented manifest signs", () => {
  it("accepts a signed notification (data.id lowercased)", () => {
    expect(verify()).toEqual({ secretIndex: 0 });
  });

  it.each<[string, string, string | null, string]>([
    [
      "no data.id in the query: the id part is left out",
      "/webhooks/mp",
      REQUEST_ID,
      `request-id:${REQUEST_ID};ts:${TS};`,
    ],
    ["no x-request-id: the request-id part is left out", URL_, null, `id:abc123;ts:${TS};`],
    ["neither", "/webhooks/mp", null, `ts:${TS};`],
    [
      "a percent-encoded data.id is decoded",
      "/webhooks/mp?data.id=A%2DB",
      REQUEST_ID,
      `id:a-b;request-id:${REQUEST_ID};ts:${TS};`,
    ],
  ])("%s", (_name, url, requestId, manifest) => {
    const request = {
      url,
      headers: {
        get: (n: string) => (n === "x-request-id" ? (requestId ?? undefined) : undefined),
      },
    };
    expect(mercadoPagoManifest(request, TS)).toBe(manifest);
    expect(verify({ url, requestId, signature: `ts=${TS},v1=${v1(manifest)}` })).toEqual({
      secretIndex: 0,
    });
  });

  it("accepts spaces after the comma and v1 before ts", () => {
    expect(verify({ signature: `v1=${V1}, ts=${TS}` })).toEqual({ secretIndex: 0 });
  });

  it("has no window by default; a finite one reads ts as seconds (≤ 11 digits) or ms", () => {
    expect(verify({ nowMs: 0 })).toEqual({ secretIndex: 0 });
    expect(verify({ toleranceMs: 300_000 })).toEqual({ secretIndex: 0, signedAt: NOW });
    expectRejected(
      () => verify({ toleranceMs: 300_000, nowMs: NOW + 300_001 }),
      "HOOKINBOX_TIMESTAMP_TOO_OLD",
      400,
    );
    const ms = String(NOW);
    const manifest = `id:abc123;request-id:${REQUEST_ID};ts:${ms};`;
    expect(verify({ toleranceMs: 300_000, signature: `ts=${ms},v1=${v1(manifest)}` })).toEqual({
      secretIndex: 0,
      signedAt: NOW,
    });
  });
});

describe("mercadopago: one defect, one code", () => {
  const cases: {
    name: string;
    url?: string;
    signature?: string | null;
    requestId?: string | null;
    active?: string[];
    nowMs?: number;
    toleranceMs?: number;
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "data.id changed",
      url: "/webhooks/mp?data.id=ABC124",
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "x-request-id changed",
      requestId: "other",
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "x-request-id removed",
      requestId: null,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "ts changed",
      signature: `ts=1704908011,v1=${V1}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "wrong secret", active: [OTHER], code: "HOOKINBOX_SIGNATURE_MISMATCH", status: 401 },
    { name: "missing header", signature: null, code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    { name: "no ts", signature: `v1=${V1}`, code: "HOOKINBOX_TIMESTAMP_MISSING", status: 400 },
    {
      name: "empty ts",
      signature: `ts=,v1=${V1}`,
      code: "HOOKINBOX_TIMESTAMP_MISSING",
      status: 400,
    },
    {
      name: "ts twice",
      signature: `ts=${TS},ts=${TS},v1=${V1}`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "an item without =",
      signature: `ts=${TS},v1`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "no signature",
      signature: `ts=${TS}`,
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "only v2",
      signature: `ts=${TS},v2=${V1}`,
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "truncated v1",
      signature: `ts=${TS},v1=${V1.slice(0, 40)}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "one v1 digit changed",
      signature: `ts=${TS},v1=${flipChar(V1, 2)}`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "malformed ts with a window",
      signature: `ts=17e8,v1=${V1}`,
      toleranceMs: 300_000,
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, V1]);
  });
});

describe("mercadopago: identity preset", () => {
  it("reads the documented body fields", () => {
    expect(scheme.provider).toBe("mercadopago");
    expect(scheme.identity).toBe(mercadoPagoIdentity);
    expect(Object.isFrozen(mercadoPagoIdentity)).toBe(true);
    expect(mercadoPagoIdentity).toEqual({
      id: "$.id",
      type: "$.action",
      occurredAt: "$.date_created",
      orderingKey: "$.data.id",
    });
  });
});

describeSchemeContract({
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: NOW,
  url: URL_,
  // The body is not part of the manifest: Mercado Pago signs data.id, the request id and ts.
  signsBody: false,
  sign: (_body, secret) => ({
    "x-signature": `ts=${TS},v1=${v1(`id:abc123;request-id:${REQUEST_ID};ts:${TS};`, secret)}`,
    "x-request-id": REQUEST_ID,
  }),
});
