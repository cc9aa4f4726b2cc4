import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import {
  standardWebhooksId,
  standardWebhooksIdentity,
  standardWebhooksKey,
  standardWebhooksOccurredAt,
  standardWebhooksScheme,
} from "../../src/providers/standard-webhooks.js";
import { describeSchemeContract } from "./contract.js";
import {
  expectRejected,
  flipChar,
  type Headers,
  identityContext,
  loadVectors,
  secrets,
  signedRequest,
} from "./helpers.js";

const SECRET = `whsec_${Buffer.from("hookinbox-standard-webhooks-key!").toString("base64")}`;
const OTHER = `whsec_${Buffer.from("another-standard-webhooks-key!!!").toString("base64")}`;
const ID = "msg_2a9cWlbcTq3a1d8tnS4p0yWMZ6m";
const T = 1_700_000_000;
const NOW = T * 1000;
const TOLERANCE = 300_000;
const BODY = '{"type":"user.created","timestamp":"2023-11-14T22:13:20.000Z","data":{"id":"u_1"}}';

/** The oracle: the reference library's signer. */
function sign(payload: string, secret = SECRET, id = ID, timestamp = T): string {
  return new Webhook(secret).sign(id, new Date(timestamp * 1000), payload);
}

const SIG = sign(BODY);
const B64 = SIG.slice(3);
const HEADERS = { "webhook-id": ID, "webhook-timestamp": String(T), "webhook-signature": SIG };
const scheme = standardWebhooksScheme({ toleranceMs: TOLERANCE });

function verify(
  init: { body?: string; headers?: Headers; active?: string[]; nowMs?: number } = {},
) {
  const request = signedRequest(init.body ?? BODY, init.headers ?? HEADERS);
  return scheme.verifier.verify(request, secrets(...(init.active ?? [SECRET])), init.nowMs ?? NOW);
}

describe("standard-webhooks: accepts what the reference library signs", () => {
  it("has a well-formed oracle signature", () => {
    expect(SIG).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it.each([
    ["a JSON event", BODY],
    ["an empty object", "{}"],
    ["unicode", '{"type":"note","text":"naïve café ☕"}'],
    ["a large body", JSON.stringify({ type: "big", data: "y".repeat(200_000) })],
  ])("%s", (_name, payload) => {
    const headers = { ...HEADERS, "webhook-signature": sign(payload) };
    expect(verify({ body: payload, headers })).toEqual({ secretIndex: 0, signedAt: NOW });
  });

  it("agrees with the reference verifier on the same request", () => {
    const webhook = new Webhook(SECRET);
    // the reference verifier uses the wall clock, so sign at "now"
    const now = new Date();
    const signature = webhook.sign(ID, now, BODY);
    const headers = {
      "webhook-id": ID,
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": signature,
    };
    expect(() => webhook.verify(BODY, headers)).not.toThrow();
    const ours = scheme.verifier.verify(signedRequest(BODY, headers), secrets(SECRET), Date.now());
    expect(ours.secretIndex).toBe(0);
  });

  it("accepts the published vectors", () => {
    const vectors = loadVectors()["standard-webhooks"];
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      const headers = {
        "webhook-id": v.id,
        "webhook-timestamp": String(v.timestamp),
        "webhook-signature": v.signature,
      };
      const result = scheme.verifier.verify(
        signedRequest(v.body, headers),
        secrets(v.secret),
        v.timestamp * 1000,
      );
      expect(result).toEqual({ secretIndex: 0, signedAt: v.timestamp * 1000 });
      expect(sign(v.body, v.secret, v.id, v.timestamp)).toBe(v.signature);
    }
  });
});

describe("standard-webhooks: accepted variants", () => {
  const svix = { "svix-id": ID, "svix-timestamp": String(T), "svix-signature": SIG };
  it.each<[string, { headers?: Headers; nowMs?: number; active?: string[] }]>([
    ["exactly at the tolerance in the past", { nowMs: NOW + TOLERANCE }],
    ["exactly at the tolerance in the future", { nowMs: NOW - TOLERANCE }],
    ["svix-* headers", { headers: svix }],
    [
      "svix-* headers, mixed case names",
      { headers: { "Svix-Id": ID, "Svix-Timestamp": String(T), "Svix-Signature": SIG } },
    ],
    [
      "webhook-* preferred over svix-* when both present",
      { headers: { ...svix, "svix-signature": `v1,${flipChar(B64, 0)}`, ...HEADERS } },
    ],
    [
      "several entries, the second right",
      { headers: { ...HEADERS, "webhook-signature": `v1,${flipChar(B64, 0)} ${SIG}` } },
    ],
    [
      "a v1a (Ed25519) entry beside v1 is ignored",
      { headers: { ...HEADERS, "webhook-signature": `v1a,${B64} ${SIG}` } },
    ],
    [
      "a v2 entry beside v1 is ignored",
      { headers: { ...HEADERS, "webhook-signature": `v2,abc ${SIG}` } },
    ],
    [
      "double spaces between entries",
      { headers: { ...HEADERS, "webhook-signature": `v1,${flipChar(B64, 0)}  ${SIG}` } },
    ],
    ["secret without the whsec_ prefix (decoded as base64)", { active: [SECRET.slice(6)] }],
    ["an undecodable secret beside a good one", { active: ["whsec_not base64!", SECRET] }],
  ])("%s", (_name, init) => {
    expect(verify(init).signedAt).toBe(NOW);
  });

  it("webhook-signature wins over a correct svix-signature", () => {
    const headers = {
      ...HEADERS,
      "webhook-signature": `v1,${flipChar(B64, 0)}`,
      "svix-signature": SIG,
    };
    expectRejected(() => verify({ headers }), "HOOKINBOX_SIGNATURE_MISMATCH", 401);
  });
});

describe("standard-webhooks: one defect, one code", () => {
  const without = (name: keyof typeof HEADERS): Headers => ({ ...HEADERS, [name]: undefined });
  const withHeader = (name: keyof typeof HEADERS, value: string): Headers => ({
    ...HEADERS,
    [name]: value,
  });
  const cases: {
    name: string;
    body?: string;
    headers?: Headers;
    active?: string[];
    nowMs?: number;
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "one body byte changed",
      body: flipChar(BODY, 2),
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
      name: "timestamp too new (tolerance + 1 s)",
      nowMs: NOW - TOLERANCE - 1000,
      code: "HOOKINBOX_TIMESTAMP_IN_FUTURE",
      status: 400,
    },
    { name: "wrong secret", active: [OTHER], code: "HOOKINBOX_SIGNATURE_MISMATCH", status: 401 },
    {
      name: "missing signature header",
      headers: without("webhook-signature"),
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "missing webhook-id header",
      headers: without("webhook-id"),
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "malformed header: entry without a comma",
      headers: withHeader("webhook-signature", B64),
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "malformed header: entry with an empty tag",
      headers: withHeader("webhook-signature", `,${B64}`),
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "malformed header: a bad entry beside a good one",
      headers: withHeader("webhook-signature", `${SIG} garbage`),
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "truncated signature",
      headers: withHeader("webhook-signature", SIG.slice(0, -4)),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "signature missing its padding",
      headers: withHeader("webhook-signature", SIG.slice(0, -1)),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "one signature character changed",
      headers: withHeader("webhook-signature", `v1,${flipChar(B64, 7)}`),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "unknown version tag only (v1a)",
      headers: withHeader("webhook-signature", `v1a,${B64}`),
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "unknown version tag only (v2)",
      headers: withHeader("webhook-signature", `v2,${B64}`),
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "unknown version tag only (V1, case matters)",
      headers: withHeader("webhook-signature", `V1,${B64}`),
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "missing timestamp",
      headers: without("webhook-timestamp"),
      code: "HOOKINBOX_TIMESTAMP_MISSING",
      status: 400,
    },
    {
      name: "malformed timestamp: ISO date",
      headers: withHeader("webhook-timestamp", "2023-11-14T22:13:20Z"),
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "malformed timestamp: fraction",
      headers: withHeader("webhook-timestamp", `${T}.0`),
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "malformed timestamp: milliseconds",
      headers: withHeader("webhook-timestamp", String(NOW)),
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "malformed timestamp: trailing letters",
      headers: withHeader("webhook-timestamp", `${T}abc`),
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "id changed (it is signed)",
      headers: withHeader("webhook-id", `${ID}x`),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "timestamp changed (it is signed)",
      headers: withHeader("webhook-timestamp", String(T + 1)),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "stale and forged: signature is checked before the window",
      headers: withHeader("webhook-signature", `v1,${flipChar(B64, 1)}`),
      nowMs: NOW + 10 * TOLERANCE,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "secret is not base64 (fails closed)",
      active: ["whsec_not base64!"],
      code: "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
      status: 503,
    },
    {
      name: "secret decodes to nothing",
      active: ["whsec_"],
      code: "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
      status: 503,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, B64, SECRET.slice(6)]);
  });

  it("missing webhook-id: the detail names the header", () => {
    const error = expectRejected(
      () => verify({ headers: without("webhook-id") }),
      "HOOKINBOX_SIGNATURE_MISSING",
      400,
    );
    expect(error.message).toContain("webhook-id header is missing");
  });
});

describe("standard-webhooks: secrets", () => {
  it("decodes like the reference library", () => {
    const v = loadVectors()["standard-webhooks"][0];
    expect(v).toBeDefined();
    const key = standardWebhooksKey(v?.secret ?? "");
    expect(key?.toString("base64")).toBe("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    expect(
      standardWebhooksKey("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?.equals(key ?? Buffer.alloc(0)),
    ).toBe(true);
    expect(standardWebhooksKey("whsec_%%%")).toBeUndefined();
    expect(standardWebhooksKey("whsec_")).toBeUndefined();
  });

  it("rejects a negative tolerance at creation", () => {
    expect(() => standardWebhooksScheme({ toleranceMs: -5 })).toThrow(/toleranceMs/);
  });
});

describe("standard-webhooks: identity preset", () => {
  it("uses the message id, the body type and the occurrence time", () => {
    expect(scheme.provider).toBe("standard-webhooks");
    expect(scheme.identity).toBe(standardWebhooksIdentity);
    expect(standardWebhooksIdentity.id).toBe(standardWebhooksId);
    expect(standardWebhooksIdentity.type).toBe("$.type");
    expect(standardWebhooksIdentity.occurredAt).toBe(standardWebhooksOccurredAt);
    expect(standardWebhooksIdentity.orderingKey).toBeUndefined();
    expect(standardWebhooksIdentity.version).toBeUndefined();
  });

  it.each<[string, Headers, string | undefined]>([
    ["webhook-id", { "webhook-id": "msg_1" }, "msg_1"],
    ["svix-id alias", { "svix-id": "msg_2" }, "msg_2"],
    ["webhook-id wins", { "webhook-id": "msg_1", "svix-id": "msg_2" }, "msg_1"],
    ["none", {}, undefined],
  ])("id: %s", (_name, headers, expected) => {
    expect(standardWebhooksId(identityContext(headers, "{}"))).toBe(expected);
  });

  it.each<[string, Headers, string, string | undefined]>([
    [
      "body timestamp",
      { "webhook-timestamp": "1" },
      '{"timestamp":"2022-11-03T20:26:10.344Z"}',
      "2022-11-03T20:26:10.344Z",
    ],
    [
      "header when the body has none",
      { "webhook-timestamp": "1614265330" },
      '{"type":"x"}',
      "2021-02-25T15:02:10.000Z",
    ],
    ["svix header alias", { "svix-timestamp": "1614265330" }, "{}", "2021-02-25T15:02:10.000Z"],
    [
      "non-string body timestamp falls back",
      { "webhook-timestamp": "1614265330" },
      '{"timestamp":123}',
      "2021-02-25T15:02:10.000Z",
    ],
    [
      "non-JSON body falls back",
      { "webhook-timestamp": "1614265330" },
      "not json",
      "2021-02-25T15:02:10.000Z",
    ],
    ["malformed header, no body timestamp", { "webhook-timestamp": "soon" }, "{}", undefined],
    ["nothing", {}, "{}", undefined],
  ])("occurredAt: %s", (_name, headers, body, expected) => {
    expect(standardWebhooksOccurredAt(identityContext(headers, body))).toBe(expected);
  });
});

describeSchemeContract({
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: NOW,
  sign: (body, secret) => ({
    "webhook-id": ID,
    "webhook-timestamp": String(T),
    "webhook-signature": sign(body, secret),
  }),
});
