import { hmacValidator } from "@adyen/api-library";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import {
  adyenAcceptedResponse,
  adyenEventKey,
  adyenIdentity,
  adyenScheme,
  adyenSignedData,
} from "../../src/providers/adyen.ts";
import { describeSchemeContract } from "./contract.js";
import { expectRejected, identityContext, loadVectors, secrets, signedRequest } from "./helpers.js";

// The oracle is the official @adyen/api-library: HmacValidator#calculateHmac signs each item
// (and validateHMAC must agree with what is accepted here).
const KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
const OTHER = "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF";
const validator = new hmacValidator();

type Item = Record<string, unknown>;

function item(fields: Item = {}): Item {
  return {
    pspReference: "7914073381342284",
    merchantAccountCode: "TestMerchant",
    merchantReference: "TestPayment-1407325143704",
    amount: { value: 1130, currency: "EUR" },
    eventCode: "AUTHORISATION",
    success: "true",
    eventDate: "2023-11-14T22:13:20+01:00",
    additionalData: {},
    ...fields,
  };
}

/** Signs an item with the official library, as Adyen does. */
function signItem(fields: Item, key = KEY): Item {
  const hmacSignature = validator.calculateHmac(fields as never, key);
  return { ...fields, additionalData: { ...(fields.additionalData as object), hmacSignature } };
}

function batch(items: Item[]): string {
  return JSON.stringify({
    live: "false",
    notificationItems: items.map((i) => ({ NotificationRequestItem: i })),
  });
}

const scheme = adyenScheme();
const ONE = batch([signItem(item())]);

function verify(body: string, active = [KEY]) {
  return scheme.verifier.verify(signedRequest(body, {}), secrets(...active), 0);
}

describe("adyen: accepts what the official library signs", () => {
  it("accepts one signed item, and the library's validator agrees", () => {
    expect(verify(ONE)).toEqual({ secretIndex: 0 });
    const signed = JSON.parse(ONE).notificationItems[0].NotificationRequestItem;
    expect(validator.validateHMAC(signed, KEY)).toBe(true);
  });

  it("accepts the published vector", () => {
    const vectors = loadVectors().adyen;
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      const [psp, original, merchant, reference, value, currency, code, success] =
        v.signedData.split(":");
      const fields = item({
        pspReference: psp,
        originalReference: original === "" ? undefined : original,
        merchantAccountCode: merchant,
        merchantReference: reference,
        amount: { value: Number(value), currency },
        eventCode: code,
        success,
        additionalData: { hmacSignature: v.signature },
      });
      expect(adyenSignedData(fields)).toBe(v.signedData);
      expect(validator.calculateHmac(v.signedData, v.hmacKeyHex)).toBe(v.signature);
      expect(verify(batch([fields]), [v.hmacKeyHex])).toEqual({ secretIndex: 0 });
    }
  });

  it.each<[string, Item]>([
    [
      "a refund with originalReference",
      item({ eventCode: "REFUND", originalReference: "881", pspReference: "991" }),
    ],
    ["a failed authorisation", item({ success: "false", reason: "Refused" })],
    ["unicode references", item({ merchantReference: "Zoë-🎉" })],
    ["a key in lower case", item()],
  ])("%s", (name, fields) => {
    const key = name.startsWith("a key in lower") ? KEY.toLowerCase() : KEY;
    expect(verify(batch([signItem(fields, KEY)]), [key])).toEqual({ secretIndex: 0 });
  });

  it("accepts an item without amount: missing fields sign as empty", () => {
    // The library's item form reads amount.value unguarded, so sign its string form instead.
    const data = "7914073381342284::TestMerchant:TestPayment-1407325143704:::REPORT_AVAILABLE:true";
    const fields = item({ amount: undefined, eventCode: "REPORT_AVAILABLE" });
    const hmacSignature = validator.calculateHmac(data, KEY);
    expect(verify(batch([{ ...fields, additionalData: { hmacSignature } }]))).toEqual({
      secretIndex: 0,
    });
  });

  it("accepts a batch where every item verifies", () => {
    const body = batch([
      signItem(item()),
      signItem(item({ pspReference: "2", eventCode: "CAPTURE" })),
    ]);
    expect(verify(body)).toEqual({ secretIndex: 0 });
  });

  it("builds the signed string with empty fields for missing values", () => {
    expect(adyenSignedData({ pspReference: "1", amount: { value: 0 }, success: true })).toBe(
      "1::::0:::true",
    );
  });
});

describe("adyen: one defect, one code", () => {
  const signedOne = signItem(item());
  const cases: {
    name: string;
    body: string;
    active?: string[];
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "2 items, one signature wrong → the whole request fails",
      body: batch([signItem(item()), signItem(item({ pspReference: "2" }), OTHER)]),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "2 items, the first wrong",
      body: batch([signItem(item(), OTHER), signItem(item({ pspReference: "2" }))]),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "a signed field changed (value)",
      body: batch([{ ...signedOne, amount: { value: 1131, currency: "EUR" } }]),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "a signed field changed (success)",
      body: batch([{ ...signedOne, success: "false" }]),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "wrong key",
      body: ONE,
      active: [OTHER],
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "key used as UTF-8 instead of hex-decoded",
      body: batch([
        { ...item(), additionalData: { hmacSignature: Buffer.from("x").toString("base64") } },
      ]),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "signature not base64",
      body: batch([{ ...item(), additionalData: { hmacSignature: "%%%" } }]),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "no hmacSignature",
      body: batch([item()]),
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "no additionalData",
      body: batch([item({ additionalData: undefined })]),
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "hmacSignature not a string",
      body: batch([item({ additionalData: { hmacSignature: 5 } })]),
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "no notificationItems",
      body: '{"live":"false"}',
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "empty notificationItems",
      body: '{"notificationItems":[]}',
      code: "HOOKINBOX_SIGNATURE_MISSING",
      status: 400,
    },
    {
      name: "an element without NotificationRequestItem",
      body: '{"notificationItems":[{"Other":{}}]}',
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    {
      name: "a signed field that is an object",
      body: batch([signItem(item({ eventCode: { x: 1 } as never }))].map((i) => i)),
      code: "HOOKINBOX_SIGNATURE_MALFORMED",
      status: 400,
    },
    { name: "body not JSON", body: "[accepted]", code: "HOOKINBOX_BODY_INVALID_JSON", status: 400 },
    {
      name: "key that is not hex",
      body: ONE,
      active: ["not hex"],
      code: "HOOKINBOX_SOURCE_NO_ACTIVE_SECRET",
      status: 503,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, body, active }) => {
    expectRejected(() => verify(body, active), code, status, [KEY, OTHER]);
  });

  it("rotation: every item must verify under one key", () => {
    const mixed = batch([signItem(item()), signItem(item({ pspReference: "2" }), OTHER)]);
    expectRejected(() => verify(mixed, [KEY, OTHER]), "HOOKINBOX_SIGNATURE_MISMATCH", 401);
    const allOther = batch([signItem(item(), OTHER), signItem(item({ pspReference: "2" }), OTHER)]);
    expect(verify(allOther, [KEY, OTHER])).toEqual({ secretIndex: 1 });
  });
});

describe("adyen: batches and the accepted response", () => {
  it("splits into one item per NotificationRequestItem, bytes verbatim", () => {
    const a = signItem(item());
    const b = signItem(item({ pspReference: "8816178952380553", eventCode: "CAPTURE" }));
    const body = `{"live":"false","notificationItems":[ {"NotificationRequestItem": ${JSON.stringify(a, null, 1)}} , {"NotificationRequestItem":${JSON.stringify(b)}}]}`;
    expect(verify(body).secretIndex).toBe(0);
    const items = scheme.split?.(signedRequest(body, {})) ?? [];
    expect(items.map((i) => i.json)).toEqual([a, b]);
    const decoder = new TextDecoder();
    expect(decoder.decode(items[0]?.body)).toBe(JSON.stringify(a, null, 1));
    expect(decoder.decode(items[1]?.body)).toBe(JSON.stringify(b));
    const keys = items.map((i) =>
      adyenEventKey({ headers: { get: () => undefined }, json: () => i.json }),
    );
    expect(keys).toEqual(["7914073381342284:AUTHORISATION:true", "8816178952380553:CAPTURE:true"]);
  });

  it("answers [accepted] as text/plain", () => {
    expect(scheme.acceptedResponse).toBe(adyenAcceptedResponse);
    expect(adyenAcceptedResponse).toEqual({
      status: 200,
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: "[accepted]",
    });
  });
});

describe("adyen: identity preset (per item)", () => {
  it("is wired to the scheme", () => {
    expect(scheme.provider).toBe("adyen");
    expect(scheme.identity).toBe(adyenIdentity);
    expect(Object.isFrozen(adyenIdentity)).toBe(true);
    expect(adyenIdentity).toMatchObject({ type: "$.eventCode", occurredAt: "$.eventDate" });
  });

  it.each<[string, Item, string | undefined, string | undefined]>([
    ["an authorisation", item(), "7914073381342284:AUTHORISATION:true", "7914073381342284"],
    [
      "a refund orders with its payment",
      item({ pspReference: "991", originalReference: "881", eventCode: "REFUND" }),
      "991:REFUND:true",
      "881",
    ],
    [
      "a failure is another event",
      item({ success: "false" }),
      "7914073381342284:AUTHORISATION:false",
      "7914073381342284",
    ],
    ["no pspReference", item({ pspReference: undefined }), undefined, undefined],
  ])("%s", (_name, fields, key, orderingKey) => {
    const context = identityContext({}, JSON.stringify(fields));
    expect(adyenEventKey(context)).toBe(key);
    const ordering = adyenIdentity.orderingKey;
    expect(typeof ordering === "function" ? ordering(context) : undefined).toBe(orderingKey);
  });
});

describeSchemeContract({
  scheme,
  secret: KEY,
  otherSecret: OTHER,
  nowMs: 0,
  signsBody: false,
  body: batch([item()]),
  sign: () => ({}),
  signedBody: (body, key) => {
    const parsed = JSON.parse(body) as { notificationItems: { NotificationRequestItem: Item }[] };
    return batch(parsed.notificationItems.map((i) => signItem(i.NotificationRequestItem, key)));
  },
});
