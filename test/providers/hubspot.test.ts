import { Signature } from "@hubspot/api-client";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import {
  hubspotDecodeUri,
  hubspotEventKey,
  hubspotIdentity,
  hubspotOrderingKey,
  hubspotScheme,
} from "../../src/providers/hubspot.ts";
import type { SplitItem } from "../../src/providers/types.ts";
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

// The oracle is the official @hubspot/api-client: Signature.getSignature signs v1, v2 and v3.
const SECRET = "yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy";
const OTHER = "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz";
const BASE = "https://hooks.example.com";
const PATH = "/webhooks/hubspot";
const NOW = 1_700_000_000_000;
const TOLERANCE = 300_000;
const BODY =
  '[{"eventId":1,"subscriptionId":12345,"portalId":62515,"occurredAt":1700000000000,"subscriptionType":"contact.creation","attemptNumber":0,"objectId":123,"changeSource":"CRM","changeFlag":"NEW","appId":54321}]';

function signV3(
  body: string,
  init: { url?: string; timestamp?: number; secret?: string; method?: string } = {},
) {
  return Signature.getSignature(init.method ?? "POST", "v3", {
    signature: "",
    clientSecret: init.secret ?? SECRET,
    requestBody: body,
    url: init.url ?? BASE + PATH,
    timestamp: init.timestamp ?? NOW,
  });
}

function signLegacy(version: "v1" | "v2", body: string, secret = SECRET, url = BASE + PATH) {
  return Signature.getSignature("POST", version, {
    signature: "",
    clientSecret: secret,
    requestBody: body,
    url,
  });
}

const SIG = signV3(BODY);
const scheme = hubspotScheme({ publicUrl: BASE, toleranceMs: TOLERANCE });

function v3Headers(
  signature: string | null = SIG,
  timestamp: string | null = String(NOW),
): Headers {
  return {
    "X-HubSpot-Signature-v3": signature ?? undefined,
    "X-HubSpot-Request-Timestamp": timestamp ?? undefined,
  };
}

function verify(
  init: {
    body?: string;
    headers?: Headers;
    url?: string;
    method?: string;
    active?: string[];
    nowMs?: number;
    legacy?: boolean;
  } = {},
) {
  const request = signedRequest(init.body ?? BODY, init.headers ?? v3Headers(), {
    url: init.url ?? PATH,
    method: init.method ?? "POST",
  });
  const s = init.legacy === false ? hubspotScheme({ publicUrl: BASE, allowLegacy: false }) : scheme;
  return s.verifier.verify(request, secrets(...(init.active ?? [SECRET])), init.nowMs ?? NOW);
}

describe("hubspot: accepts what the official package signs", () => {
  it("the oracle's isValid agrees (v3)", () => {
    const realNow = Date.now();
    expect(
      Signature.isValid({
        signatureVersion: "v3",
        signature: signV3(BODY, { timestamp: realNow }),
        clientSecret: SECRET,
        requestBody: BODY,
        url: BASE + PATH,
        timestamp: realNow,
      }),
    ).toBe(true);
  });

  it.each([
    ["a batch", BODY],
    ["unicode", '[{"propertyValue":"Zoë 🎉"}]'],
    ["an empty body", ""],
  ])("v3: %s", (_name, payload) => {
    expect(verify({ body: payload, headers: v3Headers(signV3(payload)) })).toEqual({
      secretIndex: 0,
      signedAt: NOW,
    });
  });

  it("v3: signs the method too", () => {
    const signature = signV3(BODY, { method: "PUT" });
    expect(verify({ method: "PUT", headers: v3Headers(signature) }).secretIndex).toBe(0);
    expectRejected(
      () => verify({ headers: v3Headers(signature) }),
      "HOOKINBOX_SIGNATURE_MISMATCH",
      401,
    );
  });

  it.each(["v1", "v2"] as const)("%s", (version) => {
    const headers = {
      "x-hubspot-signature": signLegacy(version, BODY),
      "x-hubspot-signature-version": version,
    };
    expect(verify({ headers })).toEqual({ secretIndex: 0 });
  });

  it("accepts the published vectors (v1, v2, v3)", () => {
    const vectors = loadVectors().hubspot;
    expect(vectors.map((v) => v.version).sort()).toEqual(["v1", "v2", "v3"]);
    for (const v of vectors) {
      const url = new URL(v.url ?? `${BASE}/`);
      const headers: Headers =
        v.version === "v3"
          ? {
              "x-hubspot-signature-v3": v.signature,
              "x-hubspot-request-timestamp": String(v.timestamp),
            }
          : { "x-hubspot-signature": v.signature, "x-hubspot-signature-version": v.version };
      const request = signedRequest(v.body, headers, {
        url: url.pathname,
        method: v.method ?? "POST",
      });
      const s = hubspotScheme({ publicUrl: url.origin });
      const result = s.verifier.verify(request, secrets(v.secret), v.timestamp ?? NOW);
      expect(result.secretIndex).toBe(0);
      // and the oracle agrees with the vector
      expect(
        Signature.getSignature(v.method ?? "POST", v.version, {
          signature: "",
          clientSecret: v.secret,
          requestBody: v.body,
          url: v.url ?? "",
          timestamp: v.timestamp ?? 0,
        }),
      ).toBe(v.signature);
    }
  });

  it.each<[string, number]>([
    ["exactly at the tolerance in the past", NOW + TOLERANCE],
    ["exactly at the tolerance in the future", NOW - TOLERANCE],
  ])("v3: accepts %s", (_name, nowMs) => {
    expect(verify({ nowMs }).secretIndex).toBe(0);
  });

  describe("v3 URI decoding", () => {
    const url = "/webhooks/hubspot?next=%2Fdeals%3A42&who=a%40b.example&q=a%20b%26c";

    it("decodes exactly : / ? @ ! $ ' ( ) * , ; (either case) and nothing else", () => {
      expect(hubspotDecodeUri("%3a%3A%2F%3F%40%21%24%27%28%29%2A%2C%3B%20%26%3D%25%2b")).toBe(
        "::/?@!$'()*,;%20%26%3D%25%2b",
      );
    });

    it("accepts a signature over the decoded URI (HubSpot's rule)", () => {
      const signed = `${BASE}/webhooks/hubspot?next=/deals:42&who=a@b.example&q=a%20b%26c`;
      expect(hubspotDecodeUri(BASE + url)).toBe(signed);
      expect(verify({ url, headers: v3Headers(signV3(BODY, { url: signed })) }).secretIndex).toBe(
        0,
      );
    });

    it("also accepts a signature over the URI as received (what the Node client signs when given it)", () => {
      expect(
        verify({ url, headers: v3Headers(signV3(BODY, { url: BASE + url })) }).secretIndex,
      ).toBe(0);
    });

    it("does not decode other escapes: %20 signed as a space does not match", () => {
      const spaced = `${BASE}/webhooks/hubspot?next=/deals:42&who=a@b.example&q=a b%26c`;
      expectRejected(
        () => verify({ url, headers: v3Headers(signV3(BODY, { url: spaced })) }),
        "HOOKINBOX_SIGNATURE_MISMATCH",
        401,
      );
    });
  });
});

describe("hubspot: one defect, one code", () => {
  const legacy = (signature: string, version?: string): Headers => ({
    "x-hubspot-signature": signature,
    "x-hubspot-signature-version": version,
  });
  const V1 = signLegacy("v1", BODY);
  const cases: {
    name: string;
    body?: string;
    headers?: Headers;
    url?: string;
    active?: string[];
    nowMs?: number;
    legacy?: boolean;
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "v3: one body byte changed",
      body: flipChar(BODY, 5),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "v3: wrong secret",
      active: [OTHER],
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "v3: another path",
      url: "/webhooks/hubspot2",
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "v3: too old",
      nowMs: NOW + TOLERANCE + 1,
      code: "HOOKINBOX_TIMESTAMP_TOO_OLD",
      status: 400,
    },
    {
      name: "v3: too new",
      nowMs: NOW - TOLERANCE - 1,
      code: "HOOKINBOX_TIMESTAMP_IN_FUTURE",
      status: 400,
    },
    {
      name: "v3: timestamp missing",
      headers: v3Headers(SIG, null),
      code: "HOOKINBOX_TIMESTAMP_MISSING",
      status: 400,
    },
    {
      name: "v3: timestamp in seconds (changes the signed string)",
      headers: v3Headers(SIG, String(NOW / 1000)),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "v3: timestamp not digits",
      headers: v3Headers(SIG, "2023-11-14"),
      code: "HOOKINBOX_TIMESTAMP_MALFORMED",
      status: 400,
    },
    {
      name: "v3: timestamp changed (it is signed)",
      headers: v3Headers(SIG, String(NOW + 1)),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "v3: hex instead of base64",
      headers: v3Headers(Buffer.from(SIG, "base64").toString("hex")),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "v3: truncated",
      headers: v3Headers(SIG.slice(0, 40)),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "v3: stale and forged (signature first)",
      headers: v3Headers(flipChar(SIG, 2)),
      nowMs: NOW + 10 * TOLERANCE,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "v3 present: a valid v1 beside a bad v3 does not help",
      headers: { ...v3Headers(flipChar(SIG, 2)), ...legacy(V1, "v1") },
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "no signature header at all",
      headers: {},
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "blank v3 and no legacy",
      headers: v3Headers("  "),
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "legacy: version header missing",
      headers: legacy(V1),
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "legacy: unknown version",
      headers: legacy(V1, "v4"),
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
    {
      name: "legacy: v1 digest labelled v2",
      headers: legacy(V1, "v2"),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "legacy: wrong secret",
      headers: legacy(V1, "v1"),
      active: [OTHER],
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "legacy: body changed",
      headers: legacy(V1, "v1"),
      body: `${BODY} `,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "legacy: base64 instead of hex",
      headers: legacy(Buffer.from(V1, "hex").toString("base64"), "v1"),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "legacy: allowLegacy off",
      headers: legacy(V1, "v1"),
      legacy: false,
      code: "HOOKINBOX_SIGNATURE_VERSION_UNSUPPORTED",
      status: 400,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [SECRET, OTHER, SIG]);
  });

  it("allowLegacy off still accepts v3", () => {
    expect(verify({ legacy: false }).secretIndex).toBe(0);
  });

  it("rejects a bad publicUrl or tolerance at creation", () => {
    expect(() => hubspotScheme({ publicUrl: "/relative" })).toThrow(/publicUrl/);
    expect(() => hubspotScheme({ publicUrl: BASE, toleranceMs: -1 })).toThrow(/toleranceMs/);
  });
});

describe("hubspot: batches", () => {
  const event = (fields: Record<string, unknown>) => ({
    eventId: 100,
    subscriptionId: 1,
    portalId: 62515,
    appId: 54321,
    occurredAt: 1_700_000_000_000,
    attemptNumber: 0,
    changeSource: "CRM",
    ...fields,
  });
  const split = (body: string): SplitItem[] => {
    const request = signedRequest(body, {});
    const items = scheme.split?.(request);
    if (items === undefined) throw new Error("hubspot must split");
    return items;
  };
  const keyOf = (item: SplitItem) =>
    hubspotEventKey({ headers: { get: () => undefined }, json: () => item.json, body: item.body });

  it("an array of 3 → 3 items with distinct keys, each its verbatim bytes", () => {
    const body = `[ ${JSON.stringify(event({ subscriptionType: "contact.creation", objectId: 1 }))} ,\n${JSON.stringify(
      event({
        subscriptionType: "contact.propertyChange",
        objectId: 1,
        propertyName: "email",
        propertyValue: "a@b.example",
      }),
    )},${JSON.stringify(event({ subscriptionType: "deal.deletion", objectId: 7 }))}]`;
    const items = split(body);
    expect(items).toHaveLength(3);
    expect(items.map((i) => i.index)).toEqual([0, 1, 2]);
    const keys = items.map(keyOf);
    expect(new Set(keys).size).toBe(3);
    expect(keys).toEqual([
      "62515:contact.creation:1:1700000000000",
      "62515:contact.propertyChange:1:1700000000000:email=a@b.example",
      "62515:deal.deletion:7:1700000000000",
    ]);
    for (const item of items) {
      const text = new TextDecoder().decode(item.body);
      expect(body.includes(text)).toBe(true);
      expect(JSON.parse(text)).toEqual(item.json);
    }
  });

  it("two items with the same eventId but different objects → distinct keys", () => {
    const body = JSON.stringify([
      event({ eventId: 9, subscriptionType: "contact.creation", objectId: 1 }),
      event({ eventId: 9, subscriptionType: "contact.creation", objectId: 2 }),
    ]);
    const keys = split(body).map(keyOf);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it("two property changes of one object at one instant → distinct keys", () => {
    const body = JSON.stringify([
      event({
        subscriptionType: "contact.propertyChange",
        objectId: 1,
        propertyName: "email",
        propertyValue: "x",
      }),
      event({
        subscriptionType: "contact.propertyChange",
        objectId: 1,
        propertyName: "phone",
        propertyValue: "x",
      }),
    ]);
    const keys = split(body).map(keyOf);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it("a retry (new attemptNumber, new eventId) keeps the key", () => {
    const first = event({
      eventId: 1,
      attemptNumber: 0,
      subscriptionType: "contact.creation",
      objectId: 1,
    });
    const retry = event({
      eventId: 2,
      attemptNumber: 1,
      subscriptionType: "contact.creation",
      objectId: 1,
    });
    const [a, b] = split(JSON.stringify([first, retry])).map(keyOf);
    expect(a).toBe(b);
  });

  it("a non-array JSON body is one item; an empty array none; non-JSON is rejected", () => {
    expect(split('{"portalId":1}')).toEqual([
      { index: 0, json: { portalId: 1 }, body: new TextEncoder().encode('{"portalId":1}') },
    ]);
    expect(split("[]")).toEqual([]);
    expectRejected(() => split("[{"), "HOOKINBOX_BODY_INVALID_JSON", 400);
  });
});

describe("hubspot: identity preset (per item)", () => {
  it("is wired to the scheme", () => {
    expect(scheme.provider).toBe("hubspot");
    expect(scheme.identity).toBe(hubspotIdentity);
    expect(Object.isFrozen(hubspotIdentity)).toBe(true);
    expect(hubspotIdentity).toMatchObject({
      type: "$.subscriptionType",
      occurredAt: "$.occurredAt",
      version: "$.occurredAt",
    });
  });

  it.each<[string, object, string | undefined, string | undefined]>([
    [
      "an association change",
      {
        portalId: 1,
        subscriptionType: "contact.associationChange",
        occurredAt: 5,
        fromObjectId: 10,
        toObjectId: 20,
        associationType: "CONTACT_TO_COMPANY",
        associationRemoved: false,
      },
      "1:contact.associationChange:10>20:5:CONTACT_TO_COMPANY:added",
      "1:contact:10",
    ],
    [
      "an association removed",
      {
        portalId: 1,
        subscriptionType: "contact.associationChange",
        occurredAt: 5,
        fromObjectId: 10,
        toObjectId: 20,
        associationType: "CONTACT_TO_COMPANY",
        associationRemoved: true,
      },
      "1:contact.associationChange:10>20:5:CONTACT_TO_COMPANY:removed",
      "1:contact:10",
    ],
    [
      "a long property value is digested",
      {
        portalId: 1,
        subscriptionType: "deal.propertyChange",
        occurredAt: 5,
        objectId: 3,
        propertyName: "notes",
        propertyValue: "x".repeat(500),
      },
      "1:deal.propertyChange:3:5:notes=sha256:",
      "1:deal:3",
    ],
    ["missing fields fall back to eventId", { eventId: 77, objectId: 3 }, "event:77", undefined],
    ["nothing usable", { foo: 1 }, undefined, undefined],
  ])("%s", (_name, item, key, orderingKey) => {
    const context = identityContext({}, JSON.stringify(item));
    const actual = hubspotEventKey(context);
    if (key?.endsWith("sha256:")) {
      expect(actual).toMatch(/^1:deal\.propertyChange:3:5:notes=sha256:[0-9a-f]{32}$/);
    } else {
      expect(actual).toBe(key);
    }
    expect(hubspotOrderingKey(context)).toBe(orderingKey);
  });
});

describeSchemeContract({
  scheme,
  secret: SECRET,
  otherSecret: OTHER,
  nowMs: NOW,
  sign: (body, secret) => ({
    "x-hubspot-signature-v3": signV3(body, { secret, url: `${BASE}/webhooks/test` }),
    "x-hubspot-request-timestamp": String(NOW),
  }),
});
