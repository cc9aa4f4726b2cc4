import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import { type HmacOptions, hmacScheme, parseSignedContent } from "../../src/providers/hmac.js";
import { describeSchemeContract } from "./contract.js";
import {
  expectRejected,
  flipChar,
  type Headers,
  loadVectors,
  secrets,
  signedRequest,
} from "./helpers.js";

const BODY = '{"eventId":"e_1","kind":"contact.created","objectId":"c_9","seq":4}';
const SECRET = "crm-shared-secret";
const OTHER = "crm-other-secret";

const BASE: HmacOptions = {
  header: "x-signature",
  algorithm: "sha256",
  encoding: "hex",
  secretEncoding: "utf8",
  signedContent: "{body}",
  timestampUnit: "s",
  toleranceMs: 300_000,
};

/** The independent oracle: Node's HMAC over the concatenated content. */
function mac(
  algorithm: string,
  key: string | Buffer,
  content: string,
  encoding: "hex" | "base64",
): string {
  return createHmac(algorithm, key).update(content).digest(encoding);
}

describe("hmac: algorithm × encoding × prefix", () => {
  const combos = (["sha1", "sha256", "sha512"] as const).flatMap((algorithm) =>
    (["hex", "base64"] as const).flatMap((encoding) =>
      [undefined, `${algorithm}=`].map((prefix) => ({ algorithm, encoding, prefix })),
    ),
  );

  it.each(combos)("$algorithm / $encoding / prefix $prefix", ({ algorithm, encoding, prefix }) => {
    const scheme = hmacScheme({ ...BASE, algorithm, encoding, prefix });
    const signature = mac(algorithm, SECRET, BODY, encoding);
    const good = signedRequest(BODY, { "x-signature": `${prefix ?? ""}${signature}` });
    expect(scheme.verifier.verify(good, secrets(SECRET), 0)).toEqual({ secretIndex: 0 });

    const tampered = signedRequest(`${BODY} `, { "x-signature": `${prefix ?? ""}${signature}` });
    expectRejected(
      () => scheme.verifier.verify(tampered, secrets(SECRET), 0),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
    const otherAlgorithm = algorithm === "sha256" ? "sha512" : "sha256";
    const wrongAlgorithm = mac(otherAlgorithm, SECRET, BODY, encoding);
    const confused = signedRequest(BODY, { "x-signature": `${prefix ?? ""}${wrongAlgorithm}` });
    expectRejected(
      () => scheme.verifier.verify(confused, secrets(SECRET), 0),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
  });
});

describe("hmac: secret encodings", () => {
  // Key bytes that are not valid UTF-8, to prove hex/base64 secrets are decoded, not used as text.
  const keyBytes = Buffer.from([0x00, 0xff, 0x10, 0x80, 0x7f, 0xc3, 0x28, 0x42, 0x99, 0x01]);
  const signature = mac("sha256", keyBytes, BODY, "hex");

  it.each<[HmacOptions["secretEncoding"], string]>([
    ["hex", keyBytes.toString("hex")],
    ["hex", keyBytes.toString("hex").toUpperCase()],
    ["base64", keyBytes.toString("base64")],
  ])("%s secret %s", (secretEncoding, secret) => {
    const scheme = hmacScheme({ ...BASE, secretEncoding });
    const request = signedRequest(BODY, { "x-signature": signature });
    expect(scheme.verifier.verify(request, secrets(secret), 0).secretIndex).toBe(0);
  });

  it("utf8 secret is used as its UTF-8 bytes", () => {
    const secret = "clé secrète ✓";
    const scheme = hmacScheme({ ...BASE, secretEncoding: "utf8" });
    const request = signedRequest(BODY, {
      "x-signature": mac("sha256", Buffer.from(secret, "utf8"), BODY, "hex"),
    });
    expect(scheme.verifier.verify(request, secrets(secret), 0).secretIndex).toBe(0);
  });

  it("the same string means different keys in different encodings", () => {
    const secret = "deadbeef";
    const request = signedRequest(BODY, { "x-signature": mac("sha256", secret, BODY, "hex") });
    expect(hmacScheme(BASE).verifier.verify(request, secrets(secret), 0).secretIndex).toBe(0);
    expectRejected(
      () =>
        hmacScheme({ ...BASE, secretEncoding: "hex" }).verifier.verify(request, secrets(secret), 0),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
  });

  it.each<[HmacOptions["secretEncoding"], string]>([
    ["hex", "not-hex"],
    ["hex", "abc"],
    ["base64", "not base64!"],
    ["base64", "AB"],
    ["utf8", ""],
  ])("a %s secret %j that does not decode fails closed", (secretEncoding, secret) => {
    const scheme = hmacScheme({ ...BASE, secretEncoding });
    const request = signedRequest(BODY, { "x-signature": signature });
    expectRejected(
      () => scheme.verifier.verify(request, secrets(secret), 0),
      "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
      503,
    );
  });

  it("an undecodable secret beside a good one is skipped", () => {
    const scheme = hmacScheme({ ...BASE, secretEncoding: "hex" });
    const request = signedRequest(BODY, { "x-signature": signature });
    const active = secrets("zz", keyBytes.toString("hex"));
    expect(scheme.verifier.verify(request, active, 0).secretIndex).toBe(1);
  });
});

describe("hmac: published vectors of other providers, expressed with the generic scheme", () => {
  it("GitHub", () => {
    const scheme = hmacScheme({ ...BASE, header: "x-hub-signature-256", prefix: "sha256=" });
    for (const v of loadVectors().github) {
      const request = signedRequest(v.body, { [v.header]: v.signature });
      expect(scheme.verifier.verify(request, secrets(v.secret), 0).secretIndex).toBe(0);
    }
  });

  it("Slack (prefix, timestamp header in seconds, literal template text)", () => {
    const scheme = hmacScheme({
      ...BASE,
      header: "X-Slack-Signature",
      prefix: "v0=",
      signedContent: "v0:{timestamp}:{body}",
      timestampHeader: "X-Slack-Request-Timestamp",
    });
    const vectors = loadVectors().slack;
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      const request = signedRequest(v.body, {
        "x-slack-signature": v.signature,
        "x-slack-request-timestamp": String(v.timestamp),
      });
      expect(scheme.verifier.verify(request, secrets(v.secret), v.timestamp * 1000)).toEqual({
        secretIndex: 0,
        signedAt: v.timestamp * 1000,
      });
    }
  });

  it("Square (notification URL = literal origin + {url}, base64)", () => {
    const vectors = loadVectors().square;
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      const url = new URL(v.notificationUrl);
      const scheme = hmacScheme({
        ...BASE,
        header: "x-square-hmacsha256-signature",
        encoding: "base64",
        signedContent: `${url.origin}{url}{body}`,
      });
      const request = signedRequest(
        v.body,
        { "x-square-hmacsha256-signature": v.signature },
        { url: url.pathname + url.search },
      );
      expect(scheme.verifier.verify(request, secrets(v.signatureKey), 0).secretIndex).toBe(0);
    }
  });

  it("HubSpot v3 ({method}, {url}, timestamp in milliseconds)", () => {
    const vectors = loadVectors().hubspot.filter((v) => v.version === "v3");
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      const url = new URL(v.url ?? "");
      const scheme = hmacScheme({
        ...BASE,
        header: "x-hubspot-signature-v3",
        encoding: "base64",
        signedContent: `{method}${url.origin}{url}{body}{timestamp}`,
        timestampHeader: "x-hubspot-request-timestamp",
        timestampUnit: "ms",
      });
      const request = signedRequest(
        v.body,
        {
          "x-hubspot-signature-v3": v.signature,
          "x-hubspot-request-timestamp": String(v.timestamp),
        },
        { method: v.method ?? "POST", url: url.pathname + url.search },
      );
      expect(scheme.verifier.verify(request, secrets(v.secret), v.timestamp ?? 0)).toEqual({
        secretIndex: 0,
        signedAt: v.timestamp,
      });
    }
  });

  it("Standard Webhooks ({id}, prefix containing a comma, base64 secret)", () => {
    const scheme = hmacScheme({
      ...BASE,
      header: "webhook-signature",
      prefix: "v1,",
      encoding: "base64",
      secretEncoding: "base64",
      signedContent: "{id}.{timestamp}.{body}",
      timestampHeader: "webhook-timestamp",
      idHeader: "webhook-id",
    });
    for (const v of loadVectors()["standard-webhooks"]) {
      const request = signedRequest(v.body, {
        "webhook-id": v.id,
        "webhook-timestamp": String(v.timestamp),
        "webhook-signature": `v1a,ignored ${v.signature}`,
      });
      const secret = v.secret.replace(/^whsec_/, "");
      expect(scheme.verifier.verify(request, secrets(secret), v.timestamp * 1000).secretIndex).toBe(
        0,
      );
    }
  });
});

describe("hmac: template with timestamp, id and other headers", () => {
  const options: HmacOptions = {
    ...BASE,
    header: "x-signature",
    prefix: "v1=",
    signedContent: "{id}.{timestamp}.{method} {url}.{header:X-Tenant}.{body}",
    timestampHeader: "x-timestamp",
    idHeader: "x-event-id",
  };
  const scheme = hmacScheme(options);
  const T = 1_700_000_000;
  const NOW = T * 1000;
  const TOLERANCE = options.toleranceMs;
  const URL_ = "/webhooks/crm?region=eu";
  const content = (id: string, ts: string, body: string) => `${id}.${ts}.POST ${URL_}.acme.${body}`;
  const SIG = mac("sha256", SECRET, content("e_1", String(T), BODY), "hex");
  const HEADERS = {
    "x-signature": `v1=${SIG}`,
    "x-timestamp": String(T),
    "x-event-id": "e_1",
    "x-tenant": "acme",
  };

  function verify(
    init: {
      body?: string;
      headers?: Headers;
      active?: string[];
      nowMs?: number;
      method?: string;
      url?: string;
    } = {},
  ) {
    const request = signedRequest(init.body ?? BODY, init.headers ?? HEADERS, {
      method: init.method ?? "POST",
      url: init.url ?? URL_,
    });
    return scheme.verifier.verify(
      request,
      secrets(...(init.active ?? [SECRET])),
      init.nowMs ?? NOW,
    );
  }

  const without = (name: keyof typeof HEADERS): Headers => ({ ...HEADERS, [name]: undefined });
  const withHeader = (name: keyof typeof HEADERS, value: string): Headers => ({
    ...HEADERS,
    [name]: value,
  });

  it.each<[string, Parameters<typeof verify>[0]]>([
    ["as signed", {}],
    ["exactly at the tolerance in the past", { nowMs: NOW + TOLERANCE }],
    ["exactly at the tolerance in the future", { nowMs: NOW - TOLERANCE }],
    [
      "several signatures separated by a space",
      { headers: withHeader("x-signature", `v1=${flipChar(SIG, 0)} v1=${SIG}`) },
    ],
    [
      "several signatures separated by a comma",
      { headers: withHeader("x-signature", `v1=${flipChar(SIG, 0)},v1=${SIG}`) },
    ],
    [
      "several signatures separated by comma and space",
      { headers: withHeader("x-signature", `v1=${flipChar(SIG, 0)}, v1=${SIG}`) },
    ],
    [
      "other tagged tokens are ignored",
      { headers: withHeader("x-signature", `t=${T},v0=abc,v1=${SIG}`) },
    ],
  ])("accepts: %s", (_name, init) => {
    expect(verify(init)).toEqual({ secretIndex: 0, signedAt: NOW });
  });

  const cases: ({ name: string; code: ErrorCode; status: number } & Parameters<
    typeof verify
  >[0])[] = [
    {
      name: "one body byte changed",
      body: flipChar(BODY, 4),
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
      headers: without("x-signature"),
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "malformed header: token without the prefix's separator",
      headers: withHeader("x-signature", SIG),
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "malformed header: only separators",
      headers: withHeader("x-signature", ", ,"),
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "truncated signature",
      headers: withHeader("x-signature", `v1=${SIG.slice(0, -2)}`),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "unknown version tag only",
      headers: withHeader("x-signature", `v2=${SIG}`),
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "missing timestamp",
      headers: without("x-timestamp"),
      code: "HOOKINBOX_TIMESTAMP_MISSING",
      status: 400,
    },
    {
      name: "malformed timestamp",
      headers: withHeader("x-timestamp", `${T}s`),
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "timestamp in ms where seconds are configured",
      headers: withHeader("x-timestamp", String(NOW)),
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "timestamp changed (it is signed)",
      headers: withHeader("x-timestamp", String(T + 1)),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "missing id header (it is signed)",
      headers: without("x-event-id"),
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "id changed",
      headers: withHeader("x-event-id", "e_2"),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "missing signed header",
      headers: without("x-tenant"),
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "signed header changed",
      headers: withHeader("x-tenant", "evil"),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "method changed", method: "PUT", code: "HOOKINBOX_SIGNATURE_MISMATCH", status: 401 },
    {
      name: "url changed",
      url: "/webhooks/crm?region=us",
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "stale and forged: signature is checked before the window",
      headers: withHeader("x-signature", `v1=${flipChar(SIG, 9)}`),
      nowMs: NOW + 10 * TOLERANCE,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, SIG]);
  });

  it("the missing id header is named in the detail", () => {
    const error = expectRejected(
      () => verify({ headers: without("x-event-id") }),
      "HOOKINBOX_SIGNATURE_MISSING",
      400,
    );
    expect(error.message).toContain("x-event-id");
  });

  it("milliseconds timestamps", () => {
    const ms = hmacScheme({ ...options, timestampUnit: "ms" });
    const signature = mac("sha256", SECRET, content("e_1", String(NOW), BODY), "hex");
    const headers = { ...HEADERS, "x-signature": `v1=${signature}`, "x-timestamp": String(NOW) };
    const request = signedRequest(BODY, headers, { url: URL_ });
    expect(ms.verifier.verify(request, secrets(SECRET), NOW + 1)).toEqual({
      secretIndex: 0,
      signedAt: NOW,
    });
    expectRejected(
      () => ms.verifier.verify(request, secrets(SECRET), NOW + TOLERANCE + 1),
      "HOOKINBOX_TIMESTAMP_TOO_OLD",
      400,
    );
  });

  it("a timestamp header without {timestamp} in the template is still required and checked", () => {
    const unsigned = hmacScheme({ ...BASE, timestampHeader: "x-timestamp" });
    const signature = mac("sha256", SECRET, BODY, "hex");
    const request = (ts?: string) =>
      signedRequest(BODY, { "x-signature": signature, "x-timestamp": ts });
    expect(unsigned.verifier.verify(request(String(T)), secrets(SECRET), NOW).signedAt).toBe(NOW);
    expectRejected(
      () => unsigned.verifier.verify(request(), secrets(SECRET), NOW),
      "HOOKINBOX_TIMESTAMP_MISSING",
      400,
    );
    expectRejected(
      () => unsigned.verifier.verify(request(String(T)), secrets(SECRET), NOW + TOLERANCE + 1),
      "HOOKINBOX_TIMESTAMP_TOO_OLD",
      400,
    );
  });
});

describe("hmac: signature header tolerance", () => {
  const sig = mac("sha256", SECRET, BODY, "base64");
  const noPrefix = hmacScheme({ ...BASE, encoding: "base64" });
  const commaPrefix = hmacScheme({ ...BASE, encoding: "base64", prefix: "v1," });
  const wrong = mac("sha256", OTHER, BODY, "base64");

  it.each([
    ["a single signature", sig],
    ["space-separated", `${wrong} ${sig}`],
    ["comma-separated", `${wrong},${sig}`],
    ["comma and space", `${wrong}, ${sig}`],
    ["a tab", `${wrong}\t${sig}`],
  ])("no prefix: %s", (_name, header) => {
    const request = signedRequest(BODY, { "x-signature": header });
    expect(noPrefix.verifier.verify(request, secrets(SECRET), 0).secretIndex).toBe(0);
  });

  it("a prefix with a comma splits on whitespace only", () => {
    const request = signedRequest(BODY, { "x-signature": `v1,${wrong} v2,xyz v1,${sig}` });
    expect(commaPrefix.verifier.verify(request, secrets(SECRET), 0).secretIndex).toBe(0);
  });

  it("a prefix with a comma: a token without a comma is malformed", () => {
    const request = signedRequest(BODY, { "x-signature": `${sig}` });
    expectRejected(
      () => commaPrefix.verifier.verify(request, secrets(SECRET), 0),
      "HOOKINBOX_SIGNATURE_MALFORMED",
      400,
    );
  });

  it("a prefix without a separator character: unprefixed tokens are other versions", () => {
    const scheme = hmacScheme({ ...BASE, encoding: "base64", prefix: "sig_" });
    const ok = signedRequest(BODY, { "x-signature": `other sig_${sig}` });
    expect(scheme.verifier.verify(ok, secrets(SECRET), 0).secretIndex).toBe(0);
    const none = signedRequest(BODY, { "x-signature": sig });
    expectRejected(
      () => scheme.verifier.verify(none, secrets(SECRET), 0),
      "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      400,
    );
  });

  it("non-canonical base64 (missing padding) matches nothing", () => {
    const request = signedRequest(BODY, { "x-signature": sig.replace(/=+$/, "") });
    expectRejected(
      () => noPrefix.verifier.verify(request, secrets(SECRET), 0),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
  });

  it("header names in options are case-insensitive", () => {
    const scheme = hmacScheme({ ...BASE, header: "X-Signature" });
    const request = signedRequest(BODY, { "X-SIGNATURE": mac("sha256", SECRET, BODY, "hex") });
    expect(scheme.verifier.verify(request, secrets(SECRET), 0).secretIndex).toBe(0);
  });
});

describe("hmac: misconfiguration throws at creation", () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ["{id} without idHeader", { signedContent: "{id}.{body}" }, /idHeader/],
    [
      "{timestamp} without timestampHeader",
      { signedContent: "{timestamp}.{body}" },
      /timestampHeader/,
    ],
    ["unknown token", { signedContent: "{nonce}.{body}" }, /unknown token \{nonce\}/],
    ["unbalanced brace", { signedContent: "{body" }, /unbalanced/],
    ["stray closing brace", { signedContent: "{body}}" }, /unbalanced/],
    ["no {body}", { signedContent: "{method}{url}" }, /\{body\}/],
    ["bad header token", { signedContent: "{header:}{body}" }, /valid header/],
    ["bad algorithm", { algorithm: "md5" }, /algorithm/],
    ["bad encoding", { encoding: "base32" }, /encoding/],
    ["bad secretEncoding", { secretEncoding: "latin1" }, /secretEncoding/],
    ["bad timestampUnit", { timestampUnit: "us" }, /timestampUnit/],
    ["negative tolerance", { toleranceMs: -1 }, /toleranceMs/],
    ["empty header", { header: "" }, /header/],
    ["header with a space", { header: "x signature" }, /header/],
    ["bad idHeader", { idHeader: "x id" }, /idHeader/],
    [
      "timestampTag and timestampHeader",
      { timestampTag: "t=", timestampHeader: "x-ts" },
      /not both/,
    ],
    ["timestampTag without =", { timestampTag: "t" }, /timestampTag/],
  ])("%s", (_name, override, message) => {
    expect(() => hmacScheme({ ...BASE, ...override } as HmacOptions)).toThrow(message);
  });

  it("a plain Error, not a HookinboxError", () => {
    try {
      hmacScheme({ ...BASE, signedContent: "{id}{body}" });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(Error);
      expect((error as { code?: unknown }).code).toBeUndefined();
    }
  });
});

describe("hmac: timestamp inside the signature header (timestampTag) and RFC 3339 timestamps", () => {
  const SECRET = "tagged secret";
  const BODY = '{"id":"evt_1"}';
  const T = 1_700_000_000;
  const tagged = hmacScheme({
    ...BASE,
    prefix: "v1=",
    signedContent: "{timestamp}.{body}",
    timestampTag: "t=",
    toleranceMs: 60_000,
  });
  const header = (ts: string, body = BODY) =>
    `t=${ts},v1=${mac("sha256", SECRET, `${ts}.${body}`, "hex")}`;
  const verifyTagged = (value: string, nowMs = T * 1000) =>
    tagged.verifier.verify(signedRequest(BODY, { "x-signature": value }), secrets(SECRET), nowMs);

  it("reads the timestamp from its token, in any position", () => {
    expect(verifyTagged(header(String(T)))).toEqual({ secretIndex: 0, signedAt: T * 1000 });
    const [t, v1] = header(String(T)).split(",");
    expect(verifyTagged(`${v1}, ${t}`).secretIndex).toBe(0);
  });

  it.each<[string, string, number, ErrorCode]>([
    ["no t= token", `v1=${"0".repeat(64)}`, T * 1000, "HOOKINBOX_TIMESTAMP_MISSING"],
    ["two t= tokens", `t=${T},${header(String(T))}`, T * 1000, "HOOKINBOX_SIGNATURE_MALFORMED"],
    ["t= not digits", header("17e8"), T * 1000, "HOOKINBOX_TIMESTAMP_MALFORMED"],
    ["outside the window", header(String(T)), T * 1000 + 60_001, "HOOKINBOX_TIMESTAMP_TOO_OLD"],
  ])("%s → %s", (_name, value, nowMs, code) => {
    expectRejected(() => verifyTagged(value, nowMs), code, 400, [SECRET]);
  });

  it("RFC 3339 timestamp header: signed as sent, checked as a date", () => {
    const scheme = hmacScheme({
      ...BASE,
      encoding: "base64",
      signedContent: "{timestamp}{body}",
      timestampHeader: "x-ts",
      timestampUnit: "rfc3339",
    });
    const ts = "2023-11-14T22:13:20Z";
    const request = (stamp: string) =>
      signedRequest(BODY, {
        "x-signature": mac("sha256", SECRET, `${stamp}${BODY}`, "base64"),
        "x-ts": stamp,
      });
    expect(scheme.verifier.verify(request(ts), secrets(SECRET), T * 1000)).toEqual({
      secretIndex: 0,
      signedAt: T * 1000,
    });
    expectRejected(
      () => scheme.verifier.verify(request(String(T)), secrets(SECRET), T * 1000),
      "HOOKINBOX_TIMESTAMP_MALFORMED",
      400,
    );
  });
});

describe("hmac: parseSignedContent", () => {
  it("parses tokens and merges literal text", () => {
    expect(parseSignedContent("v0:{timestamp}:{body}")).toEqual([
      { kind: "literal", text: "v0:" },
      { kind: "timestamp" },
      { kind: "literal", text: ":" },
      { kind: "body" },
    ]);
    expect(parseSignedContent("{method}{url}{header:X-Foo}{id}{body}")).toEqual([
      { kind: "method" },
      { kind: "url" },
      { kind: "header", name: "x-foo" },
      { kind: "id" },
      { kind: "body" },
    ]);
    expect(parseSignedContent("{body}")).toEqual([{ kind: "body" }]);
  });
});

describe("hmac: identity preset", () => {
  it("names the id header when idHeader is set", () => {
    const scheme = hmacScheme({ ...BASE, idHeader: "X-Event-Id" });
    expect(scheme.provider).toBe("hmac");
    expect(scheme.identity).toEqual({ id: "header:x-event-id" });
  });

  it("is empty otherwise (the source must name identity.id)", () => {
    expect(hmacScheme(BASE).identity).toEqual({});
  });
});

describeSchemeContract({
  label: "body only, hex, prefix",
  scheme: hmacScheme({ ...BASE, prefix: "sha256=" }),
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: 0,
  sign: (body, secret) => ({ "x-signature": `sha256=${mac("sha256", secret, body, "hex")}` }),
});

describeSchemeContract({
  label: "timestamp in ms, base64",
  scheme: hmacScheme({
    ...BASE,
    encoding: "base64",
    signedContent: "{timestamp}.{body}",
    timestampHeader: "x-ts",
    timestampUnit: "ms",
  }),
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: 1_700_000_000_123,
  sign: (body, secret) => ({
    "x-ts": "1700000000123",
    "x-signature": mac("sha256", secret, `1700000000123.${body}`, "base64"),
  }),
});
