import { createHash } from "node:crypto";
import twilio from "twilio";
import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors.js";
import {
  twilioEventId,
  twilioEventType,
  twilioIdentity,
  twilioOrderingKey,
  twilioParamString,
  twilioScheme,
  twilioUrlVariants,
} from "../../src/providers/twilio.ts";
import { describeSchemeContract } from "./contract.js";
import {
  expectRejected,
  type Headers,
  identityContext,
  loadVectors,
  secrets,
  signedRequest,
} from "./helpers.js";

// The oracle is the official `twilio` package: getExpectedTwilioSignature signs, and its
// validateRequest / validateRequestWithBody must agree with every request accepted here.
const TOKEN = "hookinbox-twilio-auth-token-0123";
const OTHER = "hookinbox-twilio-other-token-987";
const BASE = "https://hooks.example.com";
const PATH = "/webhooks/twilio?tenant=acme";
const PARAMS: Record<string, string> = {
  AccountSid: "AC0123456789abcdef0123456789abcdef",
  MessageSid: "SM0123456789abcdef0123456789abcdef",
  MessageStatus: "delivered",
  To: "+15558675310",
  From: "+15017122661",
  Body: "Hi there & welcome: 100% ✓",
};
const FORM = new URLSearchParams(PARAMS).toString();
const scheme = twilioScheme({ publicUrl: BASE });

function sign(url: string, params: Record<string, string | string[]> = PARAMS, token = TOKEN) {
  return twilio.getExpectedTwilioSignature(token, url, params);
}

const SIG = sign(BASE + PATH);

function verify(
  init: {
    body?: string;
    url?: string;
    signature?: string | null;
    active?: string[];
    publicUrl?: string;
    headers?: Headers;
  } = {},
) {
  const signature = init.signature === undefined ? SIG : init.signature;
  const request = signedRequest(
    init.body ?? FORM,
    { ...init.headers, "X-Twilio-Signature": signature ?? undefined },
    { url: init.url ?? PATH },
  );
  const s = init.publicUrl === undefined ? scheme : twilioScheme({ publicUrl: init.publicUrl });
  return s.verifier.verify(request, secrets(...(init.active ?? [TOKEN])), 0);
}

describe("twilio: accepts what the official package signs", () => {
  it("the oracle agrees with itself", () => {
    expect(twilio.validateRequest(TOKEN, SIG, BASE + PATH, PARAMS)).toBe(true);
  });

  it("accepts a form-encoded status callback", () => {
    expect(verify()).toEqual({ secretIndex: 0 });
  });

  it("accepts the published vectors", () => {
    const vectors = loadVectors().twilio;
    expect(vectors.length).toBeGreaterThan(0);
    for (const v of vectors) {
      const url = new URL(v.url);
      const request = signedRequest(
        new URLSearchParams(v.params).toString(),
        { "x-twilio-signature": v.signature },
        { url: url.pathname + url.search },
      );
      const s = twilioScheme({ publicUrl: url.origin });
      expect(s.verifier.verify(request, secrets(v.authToken), 0)).toEqual({ secretIndex: 0 });
      expect(sign(v.url, v.params, v.authToken)).toBe(v.signature);
    }
  });

  it("accepts parameters in any order and however they are percent-encoded (Twilio signs values)", () => {
    const reordered = Object.entries(PARAMS)
      .reverse()
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
      .join("&");
    expect(reordered).not.toBe(FORM);
    expect(verify({ body: reordered })).toEqual({ secretIndex: 0 });
  });

  it("accepts a repeated parameter the way the helper signs it (distinct values, sorted)", () => {
    const params = { CallSid: "CA1", Digits: ["9", "1", "9"] };
    const signature = sign(BASE + PATH, params);
    expect(verify({ body: "Digits=9&CallSid=CA1&Digits=1&Digits=9", signature })).toEqual({
      secretIndex: 0,
    });
  });

  it("accepts an empty body (no parameters)", () => {
    expect(verify({ body: "", signature: sign(BASE + PATH, {}) })).toEqual({ secretIndex: 0 });
  });

  describe("port spellings, like validateRequest", () => {
    it.each([
      [
        "signed with :443, configured without a port",
        `${"https://hooks.example.com:443"}${PATH}`,
        BASE,
      ],
      ["signed without a port, configured with :443", BASE + PATH, "https://hooks.example.com:443"],
      [
        "signed with :8443, configured with :8443",
        `https://hooks.example.com:8443${PATH}`,
        "https://hooks.example.com:8443",
      ],
      [
        "signed without a port, configured with :8443",
        BASE + PATH,
        "https://hooks.example.com:8443",
      ],
      ["http with :80", `http://hooks.example.com:80${PATH}`, "http://hooks.example.com"],
    ])("%s", (_name, signedUrl, publicUrl) => {
      const signature = sign(signedUrl);
      expect(twilio.validateRequest(TOKEN, signature, publicUrl + PATH, PARAMS)).toBe(true);
      expect(verify({ signature, publicUrl })).toEqual({ secretIndex: 0 });
    });

    it("lists the spellings the helper tries", () => {
      expect(twilioUrlVariants("https://a.example/x?y=1")).toEqual([
        "https://a.example/x?y=1",
        "https://a.example:443/x?y=1",
      ]);
      expect(twilioUrlVariants("http://a.example:8080/x")).toEqual([
        "http://a.example/x",
        "http://a.example:8080/x",
      ]);
      expect(twilioUrlVariants("not a url")).toEqual(["not a url"]);
    });
  });

  it("accepts a public URL with a path prefix", () => {
    const publicUrl = "https://edge.example.com/hookinbox/";
    const signature = sign(`https://edge.example.com/hookinbox${PATH}`);
    expect(verify({ signature, publicUrl })).toEqual({ secretIndex: 0 });
  });

  describe("JSON bodies: bodySHA256 in the URL", () => {
    const json = '{"sid":"EX1","status":"completed","data":{"n":1}}';
    const hash = twilio.getExpectedBodyHash(json);
    const url = `/webhooks/twilio?bodySHA256=${hash}`;
    const signature = sign(BASE + url, {});

    it("the oracle validates it", () => {
      expect(twilio.validateRequestWithBody(TOKEN, signature, BASE + url, json)).toBe(true);
    });

    it("accepts the body that hashes to bodySHA256", () => {
      expect(verify({ body: json, url, signature })).toEqual({ secretIndex: 0 });
    });

    it("accepts bodySHA256 in upper case (the URL is what is signed)", () => {
      const upper = `/webhooks/twilio?bodySHA256=${hash.toUpperCase()}`;
      expect(verify({ body: json, url: upper, signature: sign(BASE + upper, {}) })).toEqual({
        secretIndex: 0,
      });
    });

    it.each<[string, { body?: string; url?: string; signature?: string }, ErrorCode]>([
      [
        "a body changed after signing",
        { body: json.replace("1", "2") },
        "HOOKINBOX_SIGNATURE_MISMATCH",
      ],
      [
        "bodySHA256 swapped for the new body's hash (the URL is signed)",
        { body: "{}", url: `/webhooks/twilio?bodySHA256=${twilio.getExpectedBodyHash("{}")}` },
        "HOOKINBOX_SIGNATURE_MISMATCH",
      ],
      [
        "bodySHA256 that is not hex (and signed as such)",
        {
          url: "/webhooks/twilio?bodySHA256=zz",
          signature: sign(`${BASE}/webhooks/twilio?bodySHA256=zz`, {}),
        },
        "HOOKINBOX_SIGNATURE_MISMATCH",
      ],
      ["bodySHA256 removed", { url: "/webhooks/twilio" }, "HOOKINBOX_SIGNATURE_MISMATCH"],
    ])("%s → %s", (_name, init, code) => {
      expectRejected(() => verify({ body: json, url, signature, ...init }), code, 401, [TOKEN]);
    });
  });
});

describe("twilio: one defect, one code", () => {
  const cases: {
    name: string;
    body?: string;
    url?: string;
    signature?: string | null;
    active?: string[];
    publicUrl?: string;
    code: ErrorCode;
    status: number;
  }[] = [
    {
      name: "wrong auth token",
      active: [OTHER],
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    { name: "missing header", signature: null, code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    { name: "blank header", signature: " ", code: "HOOKINBOX_SIGNATURE_MISSING", status: 400 },
    {
      name: "a parameter value changed",
      body: FORM.replace("delivered", "failed"),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "a parameter added",
      body: `${FORM}&Extra=1`,
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "a parameter removed",
      body: FORM.replace(/&To=[^&]*/, ""),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "the query changed",
      url: "/webhooks/twilio?tenant=other",
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "the path changed",
      url: "/webhooks/twilio2?tenant=acme",
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "another host configured",
      publicUrl: "https://other.example.com",
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "http instead of https",
      publicUrl: "http://hooks.example.com",
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "hex instead of base64",
      signature: Buffer.from(SIG, "base64").toString("hex"),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "truncated signature",
      signature: SIG.slice(0, 20),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
    {
      name: "signature from HMAC-SHA256",
      signature: createHash("sha256").update(SIG).digest("base64"),
      code: "HOOKINBOX_SIGNATURE_MISMATCH",
      status: 401,
    },
  ];

  it.each(cases)("$name → $code", ({ name: _name, code, status, ...init }) => {
    expectRejected(() => verify(init), code, status, [TOKEN, OTHER, SIG]);
  });
});

describe("twilio: options", () => {
  it.each([
    ["not a URL", "hooks.example.com"],
    ["another protocol", "ftp://hooks.example.com"],
    ["a query", "https://hooks.example.com/?x=1"],
    ["credentials", "https://u:p@hooks.example.com"],
  ])("rejects a publicUrl with %s", (_name, publicUrl) => {
    expect(() => twilioScheme({ publicUrl })).toThrow(/publicUrl/);
  });
});

describe("twilio: identity preset", () => {
  it("is wired to the scheme", () => {
    expect(scheme.provider).toBe("twilio");
    expect(scheme.identity).toBe(twilioIdentity);
    expect(Object.isFrozen(twilioIdentity)).toBe(true);
    expect(twilioIdentity.id).toBe(twilioEventId);
  });

  it("uses I-Twilio-Idempotency-Token first", () => {
    const context = identityContext({ "i-twilio-idempotency-token": "tok-1" }, FORM);
    expect(twilioEventId(context)).toBe("tok-1");
  });

  it.each<[string, string, string | undefined, string | undefined, string | undefined]>([
    [
      "a message status callback",
      FORM,
      "message:SM0123456789abcdef0123456789abcdef:delivered",
      "message.delivered",
      "SM0123456789abcdef0123456789abcdef",
    ],
    [
      "an incoming SMS (SmsStatus)",
      "MessageSid=SM9&SmsStatus=received&Body=hi",
      "message:SM9:received",
      "message.received",
      "SM9",
    ],
    [
      "a call status callback with a sequence number",
      "CallSid=CA1&CallStatus=completed&SequenceNumber=3",
      "call:CA1:completed:3",
      "call.completed",
      "CA1",
    ],
    [
      "a recording callback (also carries CallSid)",
      "CallSid=CA1&RecordingSid=RE1&RecordingStatus=completed",
      "recording:RE1:completed",
      "recording.completed",
      "RE1",
    ],
    ["a Sid without a status", "CallSid=CA1", undefined, "call", "CA1"],
    ["no Sid at all", "Foo=bar", undefined, undefined, undefined],
    [
      "a JSON body with the same fields",
      '{"MessageSid":"SM2","MessageStatus":"sent"}',
      "message:SM2:sent",
      "message.sent",
      "SM2",
    ],
  ])("synthetic key without the header: %s", (_name, body, id, type, orderingKey) => {
    const context = identityContext({}, body);
    expect(twilioEventId(context)).toBe(id);
    expect(twilioEventType(context)).toBe(type);
    expect(twilioOrderingKey(context)).toBe(orderingKey);
  });

  it("reads SequenceNumber as version and Timestamp as occurrence time", () => {
    const context = identityContext(
      {},
      "CallSid=CA1&SequenceNumber=2&Timestamp=Tue%2C%2014%20Nov%202023%2022%3A13%3A20%20%2B0000",
    );
    const version = twilioIdentity.version;
    const occurredAt = twilioIdentity.occurredAt;
    expect(typeof version === "function" && version(context)).toBe("2");
    expect(typeof occurredAt === "function" && occurredAt(context)).toBe(
      "Tue, 14 Nov 2023 22:13:20 +0000",
    );
  });

  it("builds the parameter string like the helper", () => {
    expect(twilioParamString(new URLSearchParams("To=%2B1&CallSid=CA1&To=%2B1&A=b+c"))).toBe(
      "Ab cCallSidCA1To+1",
    );
  });
});

const CONTRACT_BODY =
  '{"id":"evt_1","type":"invoice.paid","data":{"object":{"id":"in_1","amount":42}}}';
const CONTRACT_URL = `/webhooks/twilio?bodySHA256=${twilio.getExpectedBodyHash(CONTRACT_BODY)}`;

describeSchemeContract({
  label: "JSON body, bodySHA256",
  scheme,
  secret: TOKEN,
  otherSecret: OTHER,
  nowMs: 0,
  body: CONTRACT_BODY,
  url: CONTRACT_URL,
  sign: (_body, secret) => ({
    "x-twilio-signature": twilio.getExpectedTwilioSignature(secret, BASE + CONTRACT_URL, {}),
  }),
});
